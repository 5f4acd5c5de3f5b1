// GET /health (the process answers), /ready (model loaded, engine accepting;
// with the state backend's status, which does not change readiness),
// /v1/stats (JSON counters) and /metrics (Prometheus text).
#include "serve/ops/status_routes.h"

#include "serve/ops/metrics.h"

namespace parley::serve {
namespace {

std::string state_backend(const StateServices& s) {
  if (!s.failover) return "embedded";
  return state_backend_up(s) ? "up" : "down";
}

}  // namespace

void add_status_routes(Router& router, ApiContext& ctx) {
  router.add("GET", "/health", Access::Public, [](const ExchangePtr& ex, const PathParams&) {
    ex->respond(json_response(200, {{"status", "ok"}}));
  });
  router.add("GET", "/ready", Access::Public, [&ctx](const ExchangePtr& ex, const PathParams&) {
    const bool ready = ctx.state.ready && !ctx.state.draining;
    ex->respond(json_response(ready ? 200 : 503,
                              {{"ready", ready}, {"model", ctx.model_id}, {"state_backend", state_backend(ctx.services)}}));
  });
  router.add("GET", "/v1/stats", Access::Public, [&ctx](const ExchangePtr& ex, const PathParams&) {
    ex->respond(json_response(200, stats_json(ctx)));
  });
  router.add("GET", "/metrics", Access::Public, [&ctx](const ExchangePtr& ex, const PathParams&) {
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = prometheus_text(ctx);
    ex->respond(std::move(r));
  });
}

}  // namespace parley::serve
