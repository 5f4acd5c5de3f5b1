#pragma once
// What the HTTP server is configured with and calls back (http_server.h):
// its options, the record of each answered request, the WebSocket upgrade
// gate and hand-over. Shared by the server and its connections
// (http_session.h), which include this and not each other's headers.
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "serve/transport/connection_limiter.h"
#include "serve/transport/router.h"

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

}  // namespace parley::serve
