#include "serve/api/model_choice.h"

#include "serve/transport/api_error.h"
#include "util/error.h"

namespace parley::serve {
namespace {

constexpr double kMaxLoraScale = 16;

// max_model_len (vLLM's name): the context a request's prompt and answer
// share, so that clients (the chat page) can size max_tokens.
json model_object(const ApiContext& ctx, const std::string& id) {
  return {{"id", id},
          {"object", "model"},
          {"created", ctx.created},
          {"owned_by", "parley"},
          {"max_model_len", ctx.limits.context_length}};
}

}  // namespace

void select_model(const json& body, ApiContext& ctx, GenerationParams& params) {
  const auto model = get_string(body, "model");
  const auto scale = get_number(body, "lora_scale", {0, kMaxLoraScale});
  if (!model || *model == ctx.model_id) {
    if (scale) throw invalid_request("'lora_scale' needs a LoRA adapter named in 'model'", "lora_scale");
    return;
  }
  std::optional<AdapterUse> use;
  try {
    use = ctx.adapters->acquire(*model);
  } catch (const Error& e) {
    throw invalid_request("The LoRA adapter '" + *model + "' failed to load: " + e.what(), "model");
  }
  if (!use) throw unknown_model(*model, ctx);
  params.lora = std::move(use->adapter);
  params.lora_scale = scale ? float(*scale) : use->scale;
  params.model_name = *model;
}

const std::string& answer_model(const GenerationParams& params, const ApiContext& ctx) {
  return params.model_name.empty() ? ctx.model_id : params.model_name;
}

json model_entries(const ApiContext& ctx) {
  json out = json::array({model_object(ctx, ctx.model_id)});
  for (const LoraInfo& a : ctx.adapters->list()) {
    json entry = model_object(ctx, a.name);
    entry["parent"] = ctx.model_id;
    entry["root"] = a.path;
    entry["loaded"] = a.loaded;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace parley::serve
