#pragma once
// Routes requests by method and path ("/v1/models/{id}" patterns) through a
// chain of middleware (API keys, rate limits, validation: middleware.h) to handlers. Each
// route declares who may call it (Access); the middleware decides from that,
// never from the request's spelling of the path. Paths match only in their
// canonical form (no empty segment, no trailing '/', no "." or "..", literal
// segments byte for byte), so a proxy and Parley cannot disagree on which
// route a path names. Unknown or non-canonical paths are 404, known paths
// with another method 405, HEAD runs the GET route without its body; an
// ApiError thrown by a handler (or by the middleware) becomes its JSON error
// response and anything else a 500. Errors take OpenAI's shape unless the
// route renders them in its API's own (Anthropic's on /v1/messages).
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "serve/transport/exchange.h"

namespace parley::serve {

// Who may call a route: anyone, holders of an API key (anyone while the
// server has no API keys), or holders of an admin key only.
enum class Access { Public, Key, Admin };

using PathParams = std::map<std::string, std::string>;
using Handler = std::function<void(const ExchangePtr&, const PathParams&)>;
// Runs with the matched route's access; returns false after answering the
// exchange itself (the request stops there).
using Middleware = std::function<bool(const ExchangePtr&, Access)>;
// An error as a route's API shapes it (default: error_response, OpenAI's).
using ErrorRenderer = std::function<HttpResponse(const class ApiError&)>;

class Router {
 public:
  void add(std::string method, std::string pattern, Access access, Handler handler, ErrorRenderer errors = {});
  void use(Middleware middleware) { middleware_.push_back(std::move(middleware)); }
  void dispatch(const ExchangePtr& exchange) const;
  // `error` as the route at `path` shapes it (also for requests refused
  // before they reach the router, such as a body over the limit).
  HttpResponse render_error(std::string_view path, const ApiError& error) const;

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;  // "{name}" matches any one segment
    Access access;
    Handler handler;
    ErrorRenderer errors;  // empty: error_response
  };
  const Route* route_at(std::string_view path) const;  // the first route of that path, any method
  static bool match(const Route& route, const std::vector<std::string_view>& path, PathParams& params);
  void run(const ExchangePtr& exchange, const Route& route, const PathParams& params) const;

  std::vector<Route> routes_;
  std::vector<Middleware> middleware_;
};

// Answers `exchange` with the error unless it already began answering (then
// a stream is ended: the client sees a truncated stream rather than nothing).
void answer_error(const ExchangePtr& exchange, const class ApiError& error, const ErrorRenderer& render = {});

}  // namespace parley::serve
