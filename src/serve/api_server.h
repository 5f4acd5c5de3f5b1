#pragma once
// The whole service: the API routes on the HTTP server, WebSocket upgrades,
// and graceful shutdown (stop accepting, /ready false at once, idle WebSockets
// closed, let requests in flight finish within a grace period, then cancel
// them so that each ends with a clean final chunk or message).
#include <chrono>
#include <cstdint>
#include <iosfwd>

#include "serve/api/api_context.h"
#include "serve/transport/http_server.h"
#include "serve/transport/router.h"

namespace parley::serve {

class ServedModels;

struct ServeOptions {
  HttpOptions http;
  std::chrono::milliseconds grace{10000};  // for requests in flight at shutdown
};

class ApiServer {
 public:
  // `models`: a multi-model server's other models (null: `ctx`'s model only).
  ApiServer(ApiContext& ctx, ServeOptions options, ServedModels* models = nullptr);
  uint16_t start();  // binds and serves; returns the bound port
  // Blocks until drained (or the grace period and a last cancel are over).
  void shutdown();
  Router& router() { return router_; }  // for more routes and middleware before start()

 private:
  ApiContext& ctx_;
  ServedModels* models_;
  ServeOptions options_;
  Router router_;
  HttpServer http_;
};

// Starts `server`, prints "parley: listening on http://HOST:PORT" on `out`,
// serves until SIGINT or SIGTERM, then shuts down.
void serve_until_signal(ApiServer& server, const ServeOptions& options, std::ostream& out);

}  // namespace parley::serve
