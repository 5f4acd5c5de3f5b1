#pragma once
// Idle keep-alive clients held open during a load test (--idle-connections):
// each connects, sends one GET /health, reads the answer and stays silent.
// What they cost the server shows in the load's latencies; whether the
// server kept them shows in open_at_end.
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "loadtest/connection.h"
#include "loadtest/url.h"

namespace parley::loadtest {

struct IdleCount {
  int32_t requested = 0;
  int32_t opened = 0;       // answered GET /health with 200 and kept the connection
  int32_t open_at_end = 0;  // of those, not closed by the server when the load ended
  double open_s = 0;        // seconds to open them all
};

class IdleConnections {
 public:
  // Opens `n` connections (on a thread of their own) and returns once each is
  // open or failed. Throws parley::Error when none could be opened.
  IdleConnections(const Url& url, const Endpoints& endpoints, int32_t n);
  ~IdleConnections();  // closes what is left
  IdleConnections(const IdleConnections&) = delete;
  IdleConnections& operator=(const IdleConnections&) = delete;

  // Counts the connections still open, then closes them all.
  IdleCount finish();

 private:
  asio::awaitable<void> opener(const Url& url, const Endpoints& endpoints, std::atomic<int32_t>& next);
  asio::awaitable<bool> open_one(beast::tcp_stream& s, const Url& url, const Endpoints& endpoints);
  void watch(size_t i);  // a pending read: it completes only when the server closes (or talks)
  void close_all();

  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::unique_ptr<beast::tcp_stream>> streams_;
  std::vector<char> probe_;  // one byte per connection for its pending read
  IdleCount count_;
  std::atomic<int32_t> opened_{0}, closed_{0};
  std::thread thread_;
  bool finished_ = false;
};

}  // namespace parley::loadtest
