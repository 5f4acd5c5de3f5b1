#include "serve/api_server.h"

#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <functional>
#include <iostream>
#include <thread>

#include "serve/models/served_models.h"
#include "serve/ops/static_routes.h"
#include "serve/ops/status_routes.h"
#include "serve/ops/watchdog.h"
#include "serve/routes/middleware.h"
#include "serve/routes/routes.h"
#include "serve/sessions/session_routes.h"
#include "serve/transport/api_error.h"
#include "serve/ws/ws_session.h"

namespace parley::serve {
namespace {

constexpr std::chrono::seconds kWebSocketCloseWait{1};

// A --trusted-proxy carries many clients' connections: no per-address cap for it.
HttpOptions with_uncapped_proxies(HttpOptions options, const ApiContext& ctx) {
  options.uncapped_peer = [&ctx](const std::string& address) { return ctx.ops.trusted_proxies.contains(address); };
  return options;
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace

ApiServer::ApiServer(ApiContext& ctx, ServeOptions options, ServedModels* models)
    : ctx_(ctx), models_(models), options_(std::move(options)),
      http_(router_, ctx.state, with_uncapped_proxies(options_.http, ctx),
            [this](boost::beast::tcp_stream stream, auto req, ConnectionSlotPtr slot) {
              start_ws_session(ctx_, models_, options_.http, std::move(stream), std::move(req), std::move(slot));
            }) {
  add_protection(router_, ctx_);  // API keys, rate limits, validation: before every route
  http_.set_observer(access_log(ctx_));
  http_.set_upgrade_gate(websocket_gate(ctx_));
  if (models_) models_->add_routes(router_);  // before the routes of ctx's model alone
  add_openai_routes(router_, ctx_);
  add_anthropic_routes(router_, ctx_);
  add_responses_routes(router_, ctx_);
  add_batch_route(router_, ctx_);
  add_embeddings_route(router_, ctx_);
  add_tokenize_routes(router_, ctx_);
  add_adapter_routes(router_, ctx_);
  add_status_routes(router_, ctx_);
  add_session_routes(router_, ctx_);
  add_static_routes(router_);
  // Upgrades never reach the router; a plain GET is told what to do.
  router_.add("GET", "/v1/ws", Access::Key, [](const ExchangePtr&, const PathParams&) {
    throw ApiError(426, "/v1/ws takes WebSocket upgrade requests", "invalid_request_error", "", "upgrade_required");
  });
}

uint16_t ApiServer::start() {
  const uint16_t port = http_.start();
  start_watchdog(ctx_);
  ctx_.state.ready = true;
  return port;
}

void ApiServer::shutdown() {
  ctx_.state.draining = true;  // /ready answers 503 from now on
  http_.stop_accepting();
  http_.drain();  // idle WebSockets close (1001) now, the others after their answer
  if (models_) models_->start_draining();
  const auto idle = [this] {
    return ctx_.state.busy == 0 && ctx_.generations.size() == 0 && (!models_ || models_->idle());
  };
  if (!wait_until(idle, options_.grace)) {
    std::cerr << "parley: grace period over, cancelling " << ctx_.state.busy << " request(s)\n";
    ctx_.generations.cancel_all();  // each ends with finish_reason "cancelled"
    if (models_) models_->cancel_all();
    wait_until(idle, std::chrono::seconds(5));
  }
  // The WebSockets' last messages and close frames go out, and their clients answer.
  wait_until([this] { return ctx_.state.websockets == 0; }, kWebSocketCloseWait);
  http_.stop();
  ctx_.watchdog.reset();
}

void serve_until_signal(ApiServer& server, const ServeOptions& options, std::ostream& out) {
  // The handler is installed before the line is printed: a signal right after it is not lost.
  boost::asio::io_context signal_io;
  boost::asio::signal_set signals(signal_io, SIGINT, SIGTERM);
  int received = 0;
  signals.async_wait([&](const boost::system::error_code&, int signal) { received = signal; });
  const uint16_t port = server.start();
  const bool v6 = options.http.host.find(':') != std::string::npos;
  out << "parley: listening on http://" << (v6 ? "[" : "") << options.http.host << (v6 ? "]" : "") << ":" << port
      << std::endl;
  signal_io.run();
  std::cerr << "parley: " << (received == SIGINT ? "SIGINT" : "SIGTERM") << ", shutting down\n";
  server.shutdown();
}

}  // namespace parley::serve
