#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>

#include "fake_exchange.h"
#include "serve/transport/api_error.h"
#include "serve/transport/router.h"

namespace parley::serve {
namespace {

using nlohmann::json;

using test::fake;

Router make_router() {
  Router r;
  r.add("GET", "/v1/models", Access::Key, [](const ExchangePtr& ex, const PathParams&) { ex->respond(json_response(200, {{"list", true}})); });
  r.add("GET", "/v1/models/{id}", Access::Key, [](const ExchangePtr& ex, const PathParams& p) {
    ex->respond(json_response(200, {{"id", p.at("id")}}));
  });
  r.add("POST", "/v1/bad", Access::Key, [](const ExchangePtr&, const PathParams&) { throw invalid_request("nope", "field"); });
  r.add("POST", "/v1/boom", Access::Key, [](const ExchangePtr&, const PathParams&) { throw std::runtime_error("kaput"); });
  return r;
}

json body_of(const test::FakeExchange& ex) { return json::parse(ex.response.body); }

TEST(Router, MatchesPathsAndParameters) {
  const Router r = make_router();
  auto ex = fake("GET", "/v1/models/stories260K?x=1");
  r.dispatch(ex);
  EXPECT_EQ(ex->response.status, 200);
  EXPECT_EQ(body_of(*ex)["id"], "stories260K");
  auto list = fake("GET", "/v1/models");
  r.dispatch(list);
  EXPECT_TRUE(body_of(*list)["list"]);
}

TEST(Router, OnlyCanonicalPathsMatch) {
  const Router r = make_router();
  for (const char* path : {"/v1/models/", "//v1/models", "/v1//models", "/v1/./models", "/v1/x/../models",
                           "/v1%2Fmodels", "/V1/models", "v1/models", "/v1/models/a/", "/v1/models//a", ""}) {
    auto ex = fake("GET", path);
    r.dispatch(ex);
    EXPECT_EQ(ex->response.status, 404) << path;
  }
}

TEST(Router, HeadRunsTheGetRoute) {
  const Router r = make_router();
  auto head = fake("HEAD", "/v1/models");
  r.dispatch(head);
  EXPECT_EQ(head->response.status, 200);
  auto post = fake("POST", "/v1/models");
  r.dispatch(post);
  EXPECT_EQ(post->response.status, 405);
  EXPECT_EQ(post->response.headers[0].second, "GET, HEAD");
}

TEST(Router, MiddlewareSeesTheMatchedRoutesAccess) {
  Router r;
  std::vector<Access> seen;
  r.use([&seen](const ExchangePtr&, Access a) {
    seen.push_back(a);
    return true;
  });
  const auto ok = [](const ExchangePtr& ex, const PathParams&) { ex->respond(json_response(200, {})); };
  r.add("GET", "/open", Access::Public, ok);
  r.add("GET", "/api", Access::Key, ok);
  r.add("POST", "/admin/do", Access::Admin, ok);
  for (auto [method, path] : {std::pair{"GET", "/open"}, {"GET", "/api"}, {"POST", "/admin/do"}, {"GET", "/api/"}})
    r.dispatch(fake(method, path));
  EXPECT_EQ(seen, (std::vector<Access>{Access::Public, Access::Key, Access::Admin}));  // "/api/" matched nothing
}

TEST(Router, UnknownPathIs404WithOpenAiErrorShape) {
  const Router r = make_router();
  auto ex = fake("GET", "/v2/nothing");
  r.dispatch(ex);
  EXPECT_EQ(ex->response.status, 404);
  const json e = body_of(*ex)["error"];
  EXPECT_TRUE(e["message"].is_string());
  EXPECT_EQ(e["type"], "invalid_request_error");
  EXPECT_TRUE(e.contains("param"));
  EXPECT_EQ(e["code"], "not_found");
}

TEST(Router, WrongMethodIs405WithAllow) {
  const Router r = make_router();
  auto ex = fake("DELETE", "/v1/models");
  r.dispatch(ex);
  EXPECT_EQ(ex->response.status, 405);
  ASSERT_EQ(ex->response.headers.size(), 1u);
  EXPECT_EQ(ex->response.headers[0].first, "Allow");
  EXPECT_EQ(ex->response.headers[0].second, "GET, HEAD");
}

TEST(Router, ApiErrorsKeepTheirStatusAndOtherExceptionsAre500) {
  const Router r = make_router();
  auto bad = fake("POST", "/v1/bad");
  r.dispatch(bad);
  EXPECT_EQ(bad->response.status, 400);
  EXPECT_EQ(body_of(*bad)["error"]["param"], "field");
  auto boom = fake("POST", "/v1/boom");
  r.dispatch(boom);
  EXPECT_EQ(boom->response.status, 500);
  EXPECT_EQ(body_of(*boom)["error"]["type"], "server_error");
}

TEST(Router, MiddlewareMayAnswerFirst) {
  Router r = make_router();
  r.use([](const ExchangePtr& ex, Access) {
    if (ex->request().header("authorization")) return true;
    ex->respond(error_response(ApiError(401, "key needed", "invalid_request_error", "", "invalid_api_key")));
    return false;
  });
  auto denied = fake("GET", "/v1/models");
  r.dispatch(denied);
  EXPECT_EQ(denied->response.status, 401);
  auto allowed = fake("GET", "/v1/models", "", {{"authorization", "Bearer k"}});
  r.dispatch(allowed);
  EXPECT_EQ(allowed->response.status, 200);
}

// A route of another API (Anthropic's /v1/messages) shapes every error of
// its requests, the middleware's and the 405 included; other routes keep OpenAI's.
TEST(Router, ARouteRendersItsOwnErrors) {
  Router r = make_router();
  const ErrorRenderer own = [](const ApiError& e) { return json_response(e.status(), {{"own", e.what()}}); };
  r.add("POST", "/v1/own", Access::Key, [](const ExchangePtr&, const PathParams&) { throw invalid_request("bad"); }, own);
  r.add("GET", "/v1/own/{id}", Access::Key, [](const ExchangePtr&, const PathParams&) { throw std::runtime_error("x"); },
        own);
  r.use([](const ExchangePtr& ex, Access) {
    if (ex->request().header("authorization")) return true;
    throw ApiError(401, "key needed", "invalid_request_error", "", "invalid_api_key");
  });
  // The status and body of a request, with the key or without.
  const auto answer = [&r](const char* method, const char* path, bool key = true) {
    auto ex = fake(method, path, "", key ? Headers{{"authorization", "Bearer k"}} : Headers{});
    r.dispatch(ex);
    return std::pair(ex->response.status, body_of(*ex));
  };
  EXPECT_EQ(answer("POST", "/v1/own"), std::pair(400, json{{"own", "bad"}}));
  EXPECT_EQ(answer("GET", "/v1/own/1").first, 500);
  EXPECT_TRUE(answer("GET", "/v1/own/1").second.contains("own"));
  EXPECT_EQ(answer("POST", "/v1/own", false), std::pair(401, json{{"own", "key needed"}}));
  EXPECT_EQ(answer("PUT", "/v1/own").first, 405);
  EXPECT_TRUE(answer("PUT", "/v1/own").second.contains("own"));
  EXPECT_EQ(answer("POST", "/v1/bad").second["error"]["message"], "nope");
  // Refusals before routing (a body over the limit) take the shape of the path's route.
  EXPECT_TRUE(json::parse(r.render_error("/v1/own", request_too_large(10)).body).contains("own"));
  EXPECT_TRUE(json::parse(r.render_error("/v1/models", request_too_large(10)).body).contains("error"));
  EXPECT_TRUE(json::parse(r.render_error("/nowhere", request_too_large(10)).body).contains("error"));
}

TEST(HttpRequest, QueryParameters) {
  HttpRequest r;
  r.target = "/v1/sessions?user=ann&limit=5&flag";
  EXPECT_EQ(r.path(), "/v1/sessions");
  EXPECT_EQ(r.query_param("user"), "ann");
  EXPECT_EQ(r.query_param("limit"), "5");
  EXPECT_EQ(r.query_param("flag"), "");
  EXPECT_EQ(r.query_param("missing"), "");
}

}  // namespace
}  // namespace parley::serve
