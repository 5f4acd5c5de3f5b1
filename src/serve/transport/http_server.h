#pragma once
// The HTTP/1.1 server on Boost.Asio/Beast: one acceptor, a fixed pool of I/O
// threads, one strand per connection (no thread per connection), keep-alive,
// chunked streaming, a body size limit (413), idle timeouts, connection caps
// (connection_limiter.h), and a hand-over of WebSocket upgrades on /v1/ws.
// Requests go to a Router.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "serve/transport/connection_limiter.h"
#include "serve/transport/router.h"
#include "serve/transport/server_state.h"

namespace parley::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;  // 0: any free port
  int io_threads = 1;
  size_t max_body_bytes = 1 << 20;
  std::chrono::seconds idle_timeout{60};  // keep-alive connections, stalled reads and writes
  std::chrono::seconds ws_idle_timeout{300};  // WebSockets with no request message and no answer running
  size_t max_connections = 0;  // 0: default_max_connections() of the open-file limit
  size_t max_connections_per_ip = 1024;  // 0: none
  // Peers exempt from the per-address cap (proxies carrying many clients); none when empty.
  std::function<bool(const std::string& address)> uncapped_peer;
};

// What the server reports about each answered HTTP request (access log, metrics).
struct ResponseRecord {
  int status = 0;
  uint64_t bytes = 0;         // body bytes queued (streams: every chunk)
  double duration_ms = 0;     // from the complete request to the last byte queued
  double first_byte_ms = -1;  // streams: until the first chunk; -1 otherwise
  bool client_gone = false;   // the client left before the response was complete
};
using ResponseObserver = std::function<void(const Exchange&, const ResponseRecord&)>;
// Runs before a WebSocket upgrade is accepted: a response refuses it (401, 429).
using UpgradeGate = std::function<std::optional<HttpResponse>(const HttpRequest&)>;

// Takes the connection over, with its place under the connection caps.
using WebSocketUpgrade = std::function<void(boost::beast::tcp_stream stream,
                                            boost::beast::http::request<boost::beast::http::string_body> req,
                                            ConnectionSlotPtr slot)>;

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
