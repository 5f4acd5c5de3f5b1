#include "serve/api/api_context.h"

#include <chrono>

#include "serve/transport/api_error.h"

namespace parley::serve {

ApiContext::ApiContext(const Model& m, LlmEngine& e, std::string id, std::string fp, ParamLimits l)
    : model(m), engine(e), model_id(std::move(id)), fingerprint(std::move(fp)),
      created(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()),
      limits(l), adapters(std::make_unique<LoraRegistry>(m, 0)) {
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
  if (model && *model != ctx.model_id && ctx.adapters->contains(*model))
    throw invalid_request("The LoRA adapter '" + *model + "' cannot be used here; name the base model '" +
                              ctx.model_id + "'",
                          "model");
  if (model && *model != ctx.model_id) throw unknown_model(*model, ctx);
}

ApiError unknown_model(const std::string& name, const ApiContext& ctx) {
  return ApiError(404, "The model '" + name + "' does not exist; this server serves '" + ctx.model_id + "'",
                  "invalid_request_error", "model", "model_not_found");
}

}  // namespace parley::serve
