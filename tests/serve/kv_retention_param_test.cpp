#include <gtest/gtest.h>

#include "serve/transport/api_error.h"
#include "serve/api/generation_params.h"
#include "serve/api/kv_retention_param.h"
#include "serve/api/request_builder.h"

namespace parley::serve {
namespace {

constexpr int32_t kContext = 512;

std::optional<KvRetention> parse_retention(const char* body) { return parse_kv_retention(json::parse(body), kContext); }

// The message of the 400 that `body` gets, after checking that it names kv_retention.
std::string retention_error(const char* body) {
  try {
    parse_retention(body);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.to_json()["error"]["param"], "kv_retention");
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << body;
  return "";
}

TEST(KvRetentionParam, AbsentOrNullMeansTheServerDefault) {
  EXPECT_FALSE(parse_retention("{}"));
  EXPECT_FALSE(parse_retention(R"({"kv_retention": null})"));
}

TEST(KvRetentionParam, ReadsEachPolicyWithItsFields) {
  const auto full = parse_retention(R"({"kv_retention": {"policy": "full"}})");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->policy, KvPolicy::Full);
  const auto window = parse_retention(R"({"kv_retention": {"policy": "window", "window": 64}})");
  ASSERT_TRUE(window);
  EXPECT_EQ(window->policy, KvPolicy::Window);
  EXPECT_EQ(window->window, 64);
  const auto sink = parse_retention(R"({"kv_retention": {"policy": "sink", "sink": 8, "window": 100}})");
  ASSERT_TRUE(sink);
  EXPECT_EQ(sink->policy, KvPolicy::Sink);
  EXPECT_EQ(sink->sink, 8);
  EXPECT_EQ(sink->window, 100);
  const auto h2o =
      parse_retention(R"({"kv_retention": {"policy": "heavy-hitter", "sink": 2, "heavy": 30, "window": 50.0}})");
  ASSERT_TRUE(h2o);
  EXPECT_EQ(h2o->policy, KvPolicy::HeavyHitter);
  EXPECT_EQ(h2o->sink, 2);
  EXPECT_EQ(h2o->heavy, 30);
  EXPECT_EQ(h2o->window, 50);
}

TEST(KvRetentionParam, MissingFieldsAndAPlainNameTakeTheEngineDefaults) {
  const KvRetention defaults;
  const auto named = parse_retention(R"({"kv_retention": "heavy-hitter"})");
  ASSERT_TRUE(named);
  EXPECT_EQ(named->policy, KvPolicy::HeavyHitter);
  EXPECT_EQ(named->window, defaults.window);
  EXPECT_EQ(named->sink, defaults.sink);
  EXPECT_EQ(named->heavy, defaults.heavy);
  const auto sink = parse_retention(R"({"kv_retention": {"policy": "sink", "window": 32}})");
  ASSERT_TRUE(sink);
  EXPECT_EQ(sink->sink, defaults.sink);
  EXPECT_EQ(sink->heavy, 0);  // not a sink size: zeroed, out of the budget and the cache key
  const auto window = parse_retention(R"({"kv_retention": "window"})");
  ASSERT_TRUE(window);
  EXPECT_EQ(window->window, defaults.window);
  EXPECT_EQ(window->sink, 0);
  EXPECT_EQ(window->heavy, 0);
}

TEST(KvRetentionParam, RefusesUnknownPoliciesAndWrongTypes) {
  EXPECT_NE(retention_error(R"({"kv_retention": "lru"})").find("unknown policy 'lru'"), std::string::npos);
  EXPECT_NE(retention_error(R"({"kv_retention": {"policy": "Window"}})").find("unknown policy"), std::string::npos);
  EXPECT_NE(retention_error(R"({"kv_retention": {}})").find("'policy' is required"), std::string::npos);
  retention_error(R"({"kv_retention": {"policy": 3}})");
  retention_error(R"({"kv_retention": 5})");
  retention_error(R"({"kv_retention": ["window"]})");
  retention_error(R"({"kv_retention": {"policy": "window", "window": "64"}})");
  retention_error(R"({"kv_retention": {"policy": "window", "window": 6.5}})");
}

TEST(KvRetentionParam, RefusesFieldsThatDoNotBelongToThePolicy) {
  EXPECT_NE(retention_error(R"({"kv_retention": {"policy": "full", "window": 64}})")
                .find("'window' does not belong to the full"),
            std::string::npos);
  EXPECT_NE(retention_error(R"({"kv_retention": {"policy": "window", "sink": 4}})").find("'sink'"), std::string::npos);
  EXPECT_NE(retention_error(R"({"kv_retention": {"policy": "sink", "heavy": 4}})").find("'heavy'"), std::string::npos);
  retention_error(R"({"kv_retention": {"policy": "heavy-hitter", "windw": 4}})");
}

TEST(KvRetentionParam, RefusesBadNumbersAndBudgetsPastTheContext) {
  EXPECT_NE(retention_error(R"({"kv_retention": {"policy": "window", "window": 0}})")
                .find("'window' must be in [1, 512]"),
            std::string::npos);
  retention_error(R"({"kv_retention": {"policy": "sink", "sink": -1}})");
  retention_error(R"({"kv_retention": {"policy": "window", "window": 513}})");
  EXPECT_NE(retention_error(R"({"kv_retention": {"policy": "heavy-hitter", "sink": 100, "heavy": 200, "window": 300}})")
                .find("a budget of 600 tokens exceeds the context of 512"),
            std::string::npos);
  // The defaults (4 + 64 + 256 under heavy-hitter) do not fit a small context either.
  EXPECT_THROW(parse_kv_retention(json::parse(R"({"kv_retention": "heavy-hitter"})"), 128), ApiError);
  EXPECT_TRUE(parse_retention(R"({"kv_retention": {"policy": "sink", "sink": 12, "window": 500}})"));
}

TEST(KvRetentionParam, BoundedPoliciesLetMaxTokensPassTheContext) {
  const ParamLimits limits{8, 512, kContext};
  const auto params = [&](const char* body) {
    return parse_generation_params(json::parse(body), limits, LogprobsStyle::Chat);
  };
  EXPECT_EQ(params(R"({"max_tokens": 5000, "kv_retention": {"policy": "window", "window": 64}})").max_tokens, 5000);
  EXPECT_EQ(params(R"({"max_completion_tokens": 900, "kv_retention": "sink"})").max_tokens, 900);
  EXPECT_THROW(params(R"({"max_tokens": 5000, "kv_retention": "full"})"), ApiError);
  EXPECT_THROW(params(R"({"max_tokens": 5000})"), ApiError);
  const GenerationParams p = params(R"({"kv_retention": {"policy": "window", "window": 64}})");
  ASSERT_TRUE(p.kv_retention);
  EXPECT_EQ(p.kv_retention->window, 64);
}

TEST(KvRetentionParam, ReachesEveryEngineRequest) {
  GenerationParams p;
  p.n = 2;
  p.kv_retention = KvRetention{.policy = KvPolicy::Sink, .window = 40, .sink = 2};
  const EngineRequests r = build_requests(p, {{1, 2, 3}, {1, 5}}, 16);
  ASSERT_EQ(r.requests.size(), 4u);
  for (const Request& req : r.requests) {
    ASSERT_TRUE(req.kv_retention);
    EXPECT_EQ(req.kv_retention->policy, KvPolicy::Sink);
    EXPECT_EQ(req.kv_retention->window, 40);
  }
  EXPECT_FALSE(build_requests(GenerationParams{}, {{1}}, 16).requests[0].kv_retention);
}

}  // namespace
}  // namespace parley::serve
