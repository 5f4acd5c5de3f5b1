#pragma once
// The protection middleware on the router (in order: API key, request rate,
// input validation), the same checks for WebSocket upgrades, and the access
// log (docs/operations.md, docs/security.md).
#include "serve/api/api_context.h"
#include "serve/transport/http_server.h"
#include "serve/transport/router.h"

namespace parley::serve {

void add_protection(Router& router, ApiContext& ctx);
// API key and request rate for GET /v1/ws before the upgrade.
UpgradeGate websocket_gate(ApiContext& ctx);
// The same checks as add_protection for one WebSocket message (an exchange
// made of the upgrade request with the message as its POST body).
void check_ws_message(Exchange& ex, ApiContext& ctx);
// One JSON line per answered request, and the requests-by-route metric.
ResponseObserver access_log(ApiContext& ctx);

}  // namespace parley::serve
