#include "serve/api/api_context.h"

#include <chrono>

#include "serve/api/admission.h"
#include "serve/transport/api_error.h"

namespace parley::serve {

ApiContext::ApiContext(const Model& m, LlmEngine& e, std::string id, std::string fp, ParamLimits l)
    : model(m), engine(e), model_id(std::move(id)), fingerprint(std::move(fp)),
      created(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()),
      limits(l) {
  generations.set_metrics(&metrics);
}

void require_ready(const ApiContext& ctx) {
  if (!ctx.state.ready || ctx.state.draining)
    throw ApiError(503, "The server is not accepting requests (starting or shutting down)", "server_error", "",
                   "unavailable");
}

ParamLimits request_limits(const ApiContext& ctx, const Exchange& ex) {
  ParamLimits limits = ctx.limits;
  limits.priority_floor = ctx.keys.api_keys_required();
  if (const ApiKey* key = ex.api_key_name().empty() ? nullptr : ctx.keys.by_name(ex.api_key_name()))
    limits.default_priority = key->priority;
  return limits;
}

void check_model(const json& body, const ApiContext& ctx) {
  const auto model = get_string(body, "model");
  if (model && *model != ctx.model_id)
    throw ApiError(404, "The model '" + *model + "' does not exist; this server serves '" + ctx.model_id + "'",
                   "invalid_request_error", "model", "model_not_found");
}

std::shared_ptr<Generation> start_generation(Exchange& admission, ApiContext& ctx, std::vector<Request> requests,
                                             Generation::Post post, Generation::OnEvent on_event) {
  const TokenReservation reservation = admit(admission, ctx, requests);
  // While degraded, new requests go to the fallback model (same vocabulary).
  const bool degraded = ctx.state.degraded && ctx.fallback_engine;
  if (degraded) {
    admission.set_header("X-Parley-Degraded", "1");
    ++ctx.metrics.degraded_requests;
  }
  // The last final event gives back the tokens reserved and not used: on the
  // connection's strand, since the buckets may be in Redis and the engine thread must not wait.
  auto settle = [&ctx, post, reservation, left = std::make_shared<std::atomic<size_t>>(requests.size()),
                 used = std::make_shared<std::atomic<int64_t>>(0)](const Event& e) {
    *used += e.prompt_tokens + e.completion_tokens;
    if (--*left > 0 || !ctx.rate_limiter || reservation.tpm <= 0) return;
    post([&ctx, reservation, total = double(used->load())] { ctx.rate_limiter->settle(reservation, total); });
  };
  return Generation::start(degraded ? *ctx.fallback_engine : ctx.engine, ctx.generations, std::move(requests),
                           std::move(post), std::move(on_event), std::move(settle), admission.request_id());
}

std::shared_ptr<Generation> start_generation(const ExchangePtr& exchange, ApiContext& ctx,
                                             std::vector<Request> requests, Generation::OnEvent on_event) {
  auto generation = start_generation(
      *exchange, ctx, std::move(requests), [exchange](std::function<void()> f) { exchange->post(std::move(f)); },
      std::move(on_event));
  exchange->on_disconnect([weak = std::weak_ptr(generation)] {
    if (auto g = weak.lock()) g->cancel();
  });
  return generation;
}

}  // namespace parley::serve
