#pragma once
// One HTTP connection (see http_server.h); internal to the server.
#include <boost/asio/ip/tcp.hpp>
#include <memory>

#include "serve/http_server.h"

namespace parley::serve {

struct SessionEnv {
  const Router& router;
  ServerState& state;
  const HttpOptions& options;
  const WebSocketUpgrade& upgrade;
};

// Serves requests on `socket` until the client leaves, a timeout, an error, or
// shutdown; keeps itself alive while it has work pending.
void start_http_session(boost::asio::ip::tcp::socket socket, const SessionEnv& env);

}  // namespace parley::serve
