#pragma once
// The API's routes, registered on a router (docs/api.md describes them); the
// session, status and static routes are declared in their own folders
// (sessions/session_routes.h, ops/status_routes.h, ops/static_routes.h).
#include "serve/api/api_context.h"
#include "serve/transport/router.h"

namespace parley::serve {

void add_openai_routes(Router& router, ApiContext& ctx);  // /v1/chat/completions, /v1/completions, /v1/models
void add_anthropic_routes(Router& router, ApiContext& ctx);  // POST /v1/messages (Anthropic's Messages API)
void add_responses_routes(Router& router, ApiContext& ctx);  // /v1/responses[/{id}] (OpenAI's Responses API)
void add_batch_route(Router& router, ApiContext& ctx);    // POST /chat
void add_embeddings_route(Router& router, ApiContext& ctx);  // POST /v1/embeddings
void add_tokenize_routes(Router& router, ApiContext& ctx);   // POST /tokenize, /detokenize, /apply-template
void add_adapter_routes(Router& router, ApiContext& ctx);    // POST /v1/load_lora_adapter, /v1/unload_lora_adapter

}  // namespace parley::serve
