#pragma once
// The status routes (docs/operations.md), registered on a router.
#include "serve/api/api_context.h"
#include "serve/transport/router.h"

namespace parley::serve {

void add_status_routes(Router& router, ApiContext& ctx);  // /health, /ready, /metrics, /v1/stats

}  // namespace parley::serve
