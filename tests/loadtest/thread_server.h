#pragma once
// A small real HTTP server for the loadtest tests: a loopback acceptor and a
// thread per connection running the subclass's serve(socket, index), index
// counting the connections from 0. A subclass calls start() at the end of its
// constructor and stop() first in its destructor (serve() uses its members).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

namespace parley::loadtest::testing {

class ThreadServer {
 public:
  ThreadServer() : acceptor_(ioc_, boost::asio::ip::tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0)) {}
  virtual ~ThreadServer() = default;
  ThreadServer(const ThreadServer&) = delete;
  ThreadServer& operator=(const ThreadServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }
  int accepted() const { return accepted_; }

 protected:
  virtual void serve(boost::asio::ip::tcp::socket s, int index) = 0;

  void start() {
    thread_ = std::thread([this] { accept_loop(); });
  }
  void stop() {
    stop_ = true;
    boost::system::error_code ec;
    boost::asio::ip::tcp::socket poke(ioc_);
    poke.connect(acceptor_.local_endpoint(), ec);  // wakes accept()
    thread_.join();
    for (auto& t : connections_) t.join();
  }

 private:
  void accept_loop() {
    while (!stop_) {
      boost::asio::ip::tcp::socket s(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(s, ec);
      if (ec || stop_) break;
      const int index = accepted_++;
      connections_.emplace_back([this, index, s = std::move(s)]() mutable { serve(std::move(s), index); });
    }
  }

  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
  std::vector<std::thread> connections_;  // touched by the accept thread only, joined after it
};

}  // namespace parley::loadtest::testing
