#pragma once
// One HTTP connection, started by HttpServer (http_server.h); internal to the
// server. Both take their options and hooks from http_options.h.
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>
#include <memory>

#include "serve/transport/connection_limiter.h"
#include "serve/transport/http_options.h"
#include "serve/transport/router.h"
#include "serve/transport/server_state.h"

namespace parley::serve {

struct SessionEnv {
  const Router& router;
  ServerState& state;
  const HttpOptions& options;
  const WebSocketUpgrade& upgrade;
  const ResponseObserver& observer;
  const UpgradeGate& gate;
};

// Serves requests on `socket` until the client leaves, a timeout, an error, or
// shutdown; keeps itself alive while it has work pending.
// `slot`: its place under the connection caps (evictable while it waits for a request header).
void start_http_session(boost::asio::ip::tcp::socket socket, ConnectionSlotPtr slot, const SessionEnv& env);

// A Beast request as routes see it (header names lower-cased, the peer's address).
HttpRequest to_request(const boost::beast::http::request<boost::beast::http::string_body>& req,
                       const boost::asio::ip::tcp::socket& socket);

}  // namespace parley::serve
