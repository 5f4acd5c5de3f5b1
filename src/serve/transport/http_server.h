#pragma once
// The HTTP/1.1 server on Boost.Asio/Beast: one acceptor, a fixed pool of I/O
// threads, one strand per connection (no thread per connection), keep-alive,
// chunked streaming, a body size limit (413), idle timeouts, connection caps
// (connection_limiter.h), and a hand-over of WebSocket upgrades on /v1/ws.
// Requests go to a Router.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "serve/transport/connection_limiter.h"
#include "serve/transport/http_options.h"
#include "serve/transport/router.h"
#include "serve/transport/server_state.h"

namespace parley::serve {

class HttpServer {
 public:
  // `upgrade` takes WebSocket upgrade requests for /v1/ws (none: routed as usual).
  HttpServer(const Router& router, ServerState& state, HttpOptions options, WebSocketUpgrade upgrade = {});
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the I/O threads; returns the bound port. Throws
  // parley::Error when the address cannot be bound.
  uint16_t start();
  void stop_accepting();  // from any thread
  // From any thread: idle WebSockets close now, the others once their answer
  // ended (keep-alive HTTP connections stay: they get 503s while draining).
  void drain() {
    if (limiter_) limiter_->drain();
  }
  void stop();            // stops the I/O threads (open connections are dropped)
  // Before start(): called once per answered request, on its strand.
  void set_observer(ResponseObserver observer) { observer_ = std::move(observer); }
  void set_upgrade_gate(UpgradeGate gate) { gate_ = std::move(gate); }
  boost::asio::io_context& io() { return io_; }

 private:
  void accept();
  void admit(boost::asio::ip::tcp::socket socket);
  std::string address_group_of(const boost::asio::ip::tcp::socket& socket) const;

  const Router& router_;
  ServerState& state_;
  HttpOptions options_;
  WebSocketUpgrade upgrade_;
  ResponseObserver observer_;
  UpgradeGate gate_;
  // Before io_: the connections destroyed with io_ give their places back to it.
  std::unique_ptr<ConnectionLimiter> limiter_;  // from start(), which knows the open-file limit
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;  // after an accept error (e.g. out of file descriptors)
  std::vector<std::thread> threads_;
};

}  // namespace parley::serve
