#pragma once
// Which model a request's "model" names: the base model (its id, or no
// "model") or one of the LoRA adapters the server offers (ApiContext::
// adapters), as vLLM serves adapters; and the /v1/models entries for them.
#include <string>

#include "serve/api/api_context.h"

namespace parley::serve {

// Sets params.lora, lora_scale and model_name from "model" and "lora_scale"
// (a number in [0, 16] overriding the adapter's scale; 400 without an
// adapter). 404 (model_not_found) for a name not offered; 400 naming "model"
// when the adapter's file fails to load (the loader's reason).
void select_model(const json& body, ApiContext& ctx, GenerationParams& params);

// The name an answer echoes in "model": the adapter's, else the base's id.
const std::string& answer_model(const GenerationParams& params, const ApiContext& ctx);

// The /v1/models objects: the base model, then each adapter offered (parent:
// the base's id; root: its file; loaded: whether it is in memory now).
json model_entries(const ApiContext& ctx);

}  // namespace parley::serve
