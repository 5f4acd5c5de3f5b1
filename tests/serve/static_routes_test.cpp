// The embedded web/ pages: routes, content types, security headers, ETags.
#include <gtest/gtest.h>

#include "fake_exchange.h"
#include "serve/ops/static_routes.h"

namespace parley::serve {
namespace {

using test::fake;

std::string header(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "";
}

HttpResponse get(const std::string& target, Headers headers = {}) {
  Router router;
  add_static_routes(router);
  auto ex = fake("GET", target, "", std::move(headers));
  router.dispatch(ex);
  return ex->response;
}

TEST(StaticRoutes, ServesThePagesAndAssetsWithTheirTypes) {
  const HttpResponse page = get("/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("/static/chat.js"), std::string::npos);
  EXPECT_NE(get("/dashboard").body.find("/static/dashboard.js"), std::string::npos);
  EXPECT_EQ(get("/static/chat.js").content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(get("/static/style.css").content_type, "text/css; charset=utf-8");
  EXPECT_EQ(get("/static/favicon.svg").content_type, "image/svg+xml");
}

TEST(StaticRoutes, EveryResponseCarriesThePolicyAndNosniff) {
  for (const WebAsset& a : web_assets()) {
    const HttpResponse r = get("/static/" + std::string(a.name));
    EXPECT_EQ(r.body, a.data) << a.name;
    EXPECT_EQ(header(r, "Content-Security-Policy"), kContentSecurityPolicy) << a.name;
    EXPECT_EQ(header(r, "X-Content-Type-Options"), "nosniff") << a.name;
    EXPECT_EQ(header(r, "Cache-Control"), "no-cache") << a.name;
  }
  EXPECT_NE(std::string(kContentSecurityPolicy).find("script-src 'self';"), std::string::npos);
}

TEST(StaticRoutes, ETagRevalidationAnswers304WithoutBody) {
  const HttpResponse first = get("/static/chat.js");
  const std::string etag = header(first, "ETag");
  ASSERT_EQ(etag.size(), 18u);  // 16 hex digits, quoted
  const HttpResponse again = get("/static/chat.js", {{"if-none-match", etag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(header(again, "ETag"), etag);
  EXPECT_EQ(get("/static/chat.js", {{"if-none-match", "\"other\""}}).status, 200);
  EXPECT_NE(header(get("/static/style.css"), "ETag"), etag);
}

TEST(StaticRoutes, UnknownFilesAre404AndOtherMethods405) {
  EXPECT_EQ(get("/static/missing.js").status, 404);
  EXPECT_EQ(get("/static/../CMakeLists.txt").status, 404);
  Router router;
  add_static_routes(router);
  auto post = fake("POST", "/");
  router.dispatch(post);
  EXPECT_EQ(post->response.status, 405);
}

TEST(StaticRoutes, ContentTypesByExtension) {
  EXPECT_EQ(content_type_for("a.html"), "text/html; charset=utf-8");
  EXPECT_EQ(content_type_for("a.png"), "image/png");
  EXPECT_EQ(content_type_for("README"), "application/octet-stream");
}

}  // namespace
}  // namespace parley::serve
