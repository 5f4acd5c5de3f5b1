#pragma once
// The session API (docs/api.md, "Sessions and caching") and the static
// answers' reload, registered on a router.
#include "serve/api/api_context.h"
#include "serve/transport/router.h"

namespace parley::serve {

void add_session_routes(Router& router, ApiContext& ctx);  // /v1/sessions, POST /admin/static-answers/reload

}  // namespace parley::serve
