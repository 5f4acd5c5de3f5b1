// GET /, GET /dashboard and GET /static/{name}: the embedded web/ files.
#include "serve/ops/static_routes.h"

#include "serve/transport/api_error.h"

namespace parley::serve {
namespace {

const WebAsset* find_asset(std::string_view name) {
  for (const WebAsset& a : web_assets())
    if (a.name == name) return &a;
  return nullptr;
}

// Pages are served as they are; an unknown name is the API's usual 404.
void serve_file(const ExchangePtr& ex, std::string_view name) {
  const WebAsset* asset = find_asset(name);
  if (!asset) throw not_found("No static file " + std::string(name));
  ex->respond(static_response(*asset, ex->request()));
}

bool etag_matches(const HttpRequest& request, std::string_view etag) {
  const std::string* header = request.header("if-none-match");
  return header && (header->find(etag) != std::string::npos || *header == "*");
}

}  // namespace

std::string_view content_type_for(std::string_view file_name) {
  struct Type {
    std::string_view extension, type;
  };
  static constexpr Type types[] = {
      {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},   {".svg", "image/svg+xml"},
      {".png", "image/png"},                 {".ico", "image/x-icon"},
      {".txt", "text/plain; charset=utf-8"},
  };
  for (const Type& t : types)
    if (file_name.ends_with(t.extension)) return t.type;
  return "application/octet-stream";
}

HttpResponse static_response(const WebAsset& asset, const HttpRequest& request) {
  HttpResponse r;
  r.content_type = std::string(content_type_for(asset.name));
  // "no-cache": the browser keeps the file but asks each time (cheap 304s), so
  // a new binary's pages are never mixed with an old binary's scripts.
  r.headers = {{"ETag", std::string(asset.etag)},
               {"Cache-Control", "no-cache"},
               {"Content-Security-Policy", std::string(kContentSecurityPolicy)},
               {"X-Content-Type-Options", "nosniff"},
               {"Referrer-Policy", "no-referrer"}};
  if (etag_matches(request, asset.etag)) r.status = 304;
  else r.body = std::string(asset.data);
  return r;
}

void add_static_routes(Router& router) {
  router.add("GET", "/", Access::Public, [](const ExchangePtr& ex, const PathParams&) { serve_file(ex, "index.html"); });
  router.add("GET", "/dashboard", Access::Public, [](const ExchangePtr& ex, const PathParams&) { serve_file(ex, "dashboard.html"); });
  router.add("GET", "/static/{name}", Access::Public, [](const ExchangePtr& ex, const PathParams& p) { serve_file(ex, p.at("name")); });
}

}  // namespace parley::serve
