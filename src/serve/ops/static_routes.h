#pragma once
// The browser pages (web/: the chat page at GET /, the dashboard at
// GET /dashboard, their assets at GET /static/NAME), embedded in the binary at
// build time and served from memory with security headers and ETags.
#include <span>
#include <string_view>

#include "serve/transport/router.h"

namespace parley::serve {

struct WebAsset {
  std::string_view name;  // file name in web/, e.g. "app.js"
  std::string_view data;
  std::string_view etag;  // quoted, e.g. "\"3f2a...\""
};

// Defined by the file cmake/embed_files.cmake generates from web/.
std::span<const WebAsset> web_assets();

// The page's policy: no inline script or style, nothing from other origins.
inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self' ws: wss:; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

std::string_view content_type_for(std::string_view file_name);
// 200 with the file (304 when the request's If-None-Match names its ETag).
HttpResponse static_response(const WebAsset& asset, const HttpRequest& request);

void add_static_routes(Router& router);  // GET /, /dashboard, /static/{name} (web/)

}  // namespace parley::serve
