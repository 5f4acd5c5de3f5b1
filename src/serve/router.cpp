#include "serve/router.h"

#include <exception>

#include "serve/api_error.h"

namespace parley::serve {
namespace {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    const size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash);
  }
  return out;
}

bool is_param(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

}  // namespace

void Router::add(std::string method, std::string pattern, Handler handler) {
  Route r{std::move(method), pattern, {}, std::move(handler)};
  for (std::string_view s : split_path(pattern)) r.segments.emplace_back(s);
  routes_.push_back(std::move(r));
}

bool Router::match(const Route& route, const std::vector<std::string_view>& path, PathParams& params) {
  if (route.segments.size() != path.size()) return false;
  PathParams found;
  for (size_t i = 0; i < path.size(); ++i) {
    const std::string& seg = route.segments[i];
    if (is_param(seg)) found[seg.substr(1, seg.size() - 2)] = std::string(path[i]);
    else if (seg != path[i]) return false;
  }
  params = std::move(found);
  return true;
}

void Router::dispatch(const ExchangePtr& exchange) const {
  const auto path = split_path(exchange->request().path());
  std::string allowed;
  for (const Route& r : routes_) {
    PathParams params;
    if (!match(r, path, params)) continue;
    if (r.method == exchange->request().method) return run(exchange, r, params);
    allowed += (allowed.empty() ? "" : ", ") + r.method;
  }
  if (allowed.empty()) {
    answer_error(exchange, not_found("Unknown route " + exchange->request().method + " " +
                                     std::string(exchange->request().path())));
    return;
  }
  HttpResponse r = error_response(ApiError(405, "Method " + exchange->request().method + " not allowed; use " + allowed,
                                           "invalid_request_error", "", "method_not_allowed"));
  r.headers.emplace_back("Allow", allowed);
  exchange->respond(std::move(r));
}

void Router::run(const ExchangePtr& exchange, const Route& route, const PathParams& params) const {
  exchange->set_route(route.pattern);
  try {
    for (const Middleware& m : middleware_)
      if (!m(exchange)) return;
    route.handler(exchange, params);
  } catch (const ApiError& e) {
    answer_error(exchange, e);
  } catch (const std::exception& e) {
    answer_error(exchange, server_error(std::string("Internal error: ") + e.what()));
  }
}

void answer_error(const ExchangePtr& exchange, const ApiError& error) {
  if (!exchange->answered()) exchange->respond(error_response(error));
  else exchange->end_stream();
}

}  // namespace parley::serve
