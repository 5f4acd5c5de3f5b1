#include "serve/transport/router.h"

#include <exception>
#include <stdexcept>

#include "serve/transport/api_error.h"

namespace parley::serve {
namespace {

// The segments of a canonical path ("/a/b" -> {"a", "b"}; "/" -> {}); false
// for "", "//a", "/a/", "/a//b", "/./a" or "/a/..": such spellings name no route.
bool split_path(std::string_view path, std::vector<std::string_view>& out) {
  out.clear();
  if (!path.starts_with('/')) return false;
  if (path == "/") return true;
  path.remove_prefix(1);
  for (;;) {
    const size_t slash = path.find('/');
    const std::string_view segment = path.substr(0, slash);
    if (segment.empty() || segment == "." || segment == "..") return false;
    out.push_back(segment);
    if (slash == std::string_view::npos) return true;
    path.remove_prefix(slash + 1);
  }
}

bool is_param(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

}  // namespace

void Router::add(std::string method, std::string pattern, Access access, Handler handler, ErrorRenderer errors) {
  Route r{std::move(method), pattern, {}, access, std::move(handler), std::move(errors)};
  std::vector<std::string_view> segments;
  if (!split_path(pattern, segments)) throw std::invalid_argument("Router: '" + pattern + "' is not a canonical path");
  for (std::string_view s : segments) r.segments.emplace_back(s);
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
  const HttpRequest& request = exchange->request();
  // HEAD is GET without the body (Exchange::respond leaves it out).
  const std::string& method = request.method == "HEAD" ? std::string("GET") : request.method;
  std::vector<std::string_view> path;
  const bool canonical = split_path(request.path(), path);
  std::string allowed;
  const Route* first = nullptr;
  for (const Route& r : routes_) {
    PathParams params;
    if (!canonical || !match(r, path, params)) continue;
    if (r.method == method) return run(exchange, r, params);
    allowed += (allowed.empty() ? "" : ", ") + r.method + (r.method == "GET" ? ", HEAD" : "");
    if (!first) first = &r;
  }
  if (allowed.empty()) {
    answer_error(exchange, not_found("Unknown route " + request.method + " " + std::string(request.path()) +
                                     (canonical ? "" : " (paths are matched exactly: no empty segment, trailing '/', '.' or '..')")));
    return;
  }
  const ApiError error(405, "Method " + request.method + " not allowed; use " + allowed, "invalid_request_error", "",
                       "method_not_allowed");
  HttpResponse r = first->errors ? first->errors(error) : error_response(error);
  r.headers.emplace_back("Allow", allowed);
  exchange->respond(std::move(r));
}

void Router::run(const ExchangePtr& exchange, const Route& route, const PathParams& params) const {
  exchange->set_route(route.pattern);
  try {
    for (const Middleware& m : middleware_)
      if (!m(exchange, route.access)) return;
    route.handler(exchange, params);
  } catch (const ApiError& e) {
    answer_error(exchange, e, route.errors);
  } catch (const std::exception& e) {
    answer_error(exchange, server_error(std::string("Internal error: ") + e.what()), route.errors);
  }
}

const Router::Route* Router::route_at(std::string_view path) const {
  std::vector<std::string_view> segments;
  if (!split_path(path, segments)) return nullptr;
  for (const Route& r : routes_) {
    PathParams params;
    if (match(r, segments, params)) return &r;
  }
  return nullptr;
}

HttpResponse Router::render_error(std::string_view path, const ApiError& error) const {
  const Route* r = route_at(path);
  return r && r->errors ? r->errors(error) : error_response(error);
}

void answer_error(const ExchangePtr& exchange, const ApiError& error, const ErrorRenderer& render) {
  if (!exchange->answered()) exchange->respond(render ? render(error) : error_response(error));
  else exchange->end_stream();
}

}  // namespace parley::serve
