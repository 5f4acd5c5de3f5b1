#include "serve/api_context.h"

#include <chrono>

#include "serve/api_error.h"

namespace parley::serve {

ApiContext::ApiContext(const Model& m, LlmEngine& e, std::string id, std::string fp, ParamLimits l)
    : model(m), engine(e), model_id(std::move(id)), fingerprint(std::move(fp)),
      created(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()),
      limits(l) {}

void require_ready(const ApiContext& ctx) {
  if (!ctx.state.ready || ctx.state.draining)
    throw ApiError(503, "The server is not accepting requests (starting or shutting down)", "server_error", "",
                   "unavailable");
}

void check_model(const json& body, const ApiContext& ctx) {
  const auto model = get_string(body, "model");
  if (model && *model != ctx.model_id)
    throw ApiError(404, "The model '" + *model + "' does not exist; this server serves '" + ctx.model_id + "'",
                   "invalid_request_error", "model", "model_not_found");
}

std::shared_ptr<Generation> start_generation(const ExchangePtr& exchange, ApiContext& ctx,
                                             std::vector<Request> requests, Generation::OnEvent on_event) {
  auto generation = Generation::start(
      ctx.engine, ctx.generations, std::move(requests),
      [exchange](std::function<void()> f) { exchange->post(std::move(f)); }, std::move(on_event));
  exchange->on_disconnect([weak = std::weak_ptr(generation)] {
    if (auto g = weak.lock()) g->cancel();
  });
  return generation;
}

}  // namespace parley::serve
