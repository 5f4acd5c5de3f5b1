#pragma once
// The API's routes, registered on a router (docs/api.md describes them).
#include "serve/api_context.h"
#include "serve/router.h"

namespace parley::serve {

void add_openai_routes(Router& router, ApiContext& ctx);  // /v1/chat/completions, /v1/completions, /v1/models
void add_anthropic_routes(Router& router, ApiContext& ctx);  // POST /v1/messages (Anthropic's Messages API)
void add_responses_routes(Router& router, ApiContext& ctx);  // /v1/responses[/{id}] (OpenAI's Responses API)
void add_batch_route(Router& router, ApiContext& ctx);    // POST /chat
void add_embeddings_route(Router& router, ApiContext& ctx);  // POST /v1/embeddings
void add_tokenize_routes(Router& router, ApiContext& ctx);   // POST /tokenize, /detokenize, /apply-template
void add_status_routes(Router& router, ApiContext& ctx);  // /health, /ready, /metrics, /v1/stats
void add_session_routes(Router& router, ApiContext& ctx);  // /v1/sessions, POST /admin/static-answers/reload
void add_static_routes(Router& router);                  // GET /, /dashboard, /static/{name} (web/)

}  // namespace parley::serve
