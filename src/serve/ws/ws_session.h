#pragma once
// A WebSocket connection on /v1/ws (Beast): accepts the upgrade, reads text
// frames into the WsConversation, writes its messages in order, answers pings
// and sends its own when the connection is idle. It closes (1001) after
// --ws-idle-timeout without a request, when a new connection needs its place
// while it is idle, and at shutdown once idle; a message over --max-body-bytes
// gets a 413 error message, then close code 1009.
#include "serve/api/api_context.h"
#include "serve/api/model_directory.h"
#include "serve/transport/http_server.h"

namespace parley::serve {

// `models`: a multi-model server's other models, which messages may name (null: none).
void start_ws_session(ApiContext& ctx, ModelDirectory* models, const HttpOptions& options, boost::beast::tcp_stream stream,
                      boost::beast::http::request<boost::beast::http::string_body> req, ConnectionSlotPtr slot);

}  // namespace parley::serve
