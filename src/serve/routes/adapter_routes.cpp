// POST /v1/load_lora_adapter and POST /v1/unload_lora_adapter (vLLM's
// routes and fields), behind the admin key: offer a LoRA adapter under a
// name (loaded at once, so a bad file is refused here) or stop offering one.
#include "serve/api/json_fields.h"
#include "serve/routes/routes.h"
#include "serve/transport/api_error.h"
#include "util/error.h"

namespace parley::serve {
namespace {

std::string required_string(const json& body, const char* name) {
  const auto value = get_string(body, name);
  if (!value || value->empty()) throw invalid_request(std::string("'") + name + "' is required", name);
  return *value;
}

void load_adapter(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = parse_json_body(ex->request());
  refuse_other_fields(body, {"lora_name", "lora_path"});
  const std::string name = required_string(body, "lora_name"), path = required_string(body, "lora_path");
  if (name == ctx.model_id) throw invalid_request("'" + name + "' is the base model's name", "lora_name");
  try {
    ctx.adapters->add(name, path, 1.0f, true);
  } catch (const Error& e) {
    throw invalid_request(e.what(), ctx.adapters->contains(name) ? "lora_name" : "lora_path");
  }
  ex->respond(json_response(200, {{"object", "lora_adapter"}, {"lora_name", name}, {"lora_path", path}, {"loaded", true}}));
}

void unload_adapter(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = parse_json_body(ex->request());
  refuse_other_fields(body, {"lora_name", "lora_int_id"});
  const std::string name = required_string(body, "lora_name");
  switch (ctx.adapters->remove(name)) {
    case LoraRegistry::Removal::Unknown:
      throw not_found("The LoRA adapter '" + name + "' is not loaded", "model_not_found");
    case LoraRegistry::Removal::InUse:
      throw ApiError(409, "The LoRA adapter '" + name + "' is in use by running requests; retry when they finish",
                     "invalid_request_error", "lora_name", "adapter_in_use");
    case LoraRegistry::Removal::Removed: break;
  }
  ex->respond(json_response(200, {{"object", "lora_adapter"}, {"lora_name", name}, {"loaded", false}}));
}

}  // namespace

void add_adapter_routes(Router& router, ApiContext& ctx) {
  router.add("POST", "/v1/load_lora_adapter", Access::Admin,
             [&ctx](const ExchangePtr& ex, const PathParams&) { load_adapter(ex, ctx); });
  router.add("POST", "/v1/unload_lora_adapter", Access::Admin,
             [&ctx](const ExchangePtr& ex, const PathParams&) { unload_adapter(ex, ctx); });
}

}  // namespace parley::serve
