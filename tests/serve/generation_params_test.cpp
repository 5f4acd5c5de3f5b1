#include <gtest/gtest.h>

#include "serve/transport/api_error.h"
#include "serve/api/generation_params.h"

namespace parley::serve {
namespace {

const ParamLimits kLimits{8, 512, 512};

GenerationParams parse(const char* body, LogprobsStyle style = LogprobsStyle::Chat) {
  return parse_generation_params(json::parse(body), kLimits, style);
}

// The status and offending field of the ApiError that parsing `body` throws.
std::pair<int, std::string> error_of(const char* body, LogprobsStyle style = LogprobsStyle::Chat) {
  try {
    parse(body, style);
  } catch (const ApiError& e) {
    return {e.status(), e.to_json()["error"]["param"].get<std::string>()};
  }
  return {0, ""};
}

TEST(GenerationParams, DefaultsAreOpenAis) {
  const GenerationParams p = parse("{}");
  EXPECT_FLOAT_EQ(p.sampling.temperature, 1.0f);
  EXPECT_FLOAT_EQ(p.sampling.top_p, 1.0f);
  EXPECT_EQ(p.sampling.top_k, 0);
  EXPECT_EQ(p.max_tokens, 0);
  EXPECT_EQ(p.n, 1);
  EXPECT_EQ(p.top_logprobs, -1);
  EXPECT_FALSE(p.stream);
  EXPECT_FALSE(p.seeded);
  EXPECT_EQ(p.user, "");
}

TEST(GenerationParams, ReadsEveryField) {
  const GenerationParams p = parse(R"({"temperature": 0, "top_p": 0.5, "top_k": 40, "min_p": 0.1, "n": 3,
    "max_tokens": 7, "stop": ["a", "b"], "seed": 42, "presence_penalty": 0.5, "frequency_penalty": -1,
    "logit_bias": {"13": 5, "7": -100}, "logprobs": true, "top_logprobs": 3, "stream": true,
    "stream_options": {"include_usage": true}, "user": "u1", "ignore_eos": true,
    "speculative": false})");
  EXPECT_FLOAT_EQ(p.sampling.temperature, 0.0f);
  EXPECT_FLOAT_EQ(p.sampling.top_p, 0.5f);
  EXPECT_EQ(p.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(p.sampling.min_p, 0.1f);
  EXPECT_EQ(p.n, 3);
  EXPECT_EQ(p.max_tokens, 7);
  EXPECT_EQ(p.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(p.seeded);
  EXPECT_EQ(p.sampling.seed, 42u);
  EXPECT_FLOAT_EQ(p.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(p.sampling.frequency_penalty, -1.0f);
  ASSERT_EQ(p.sampling.logit_bias.size(), 2u);
  EXPECT_EQ(p.top_logprobs, 3);
  EXPECT_TRUE(p.stream);
  EXPECT_TRUE(p.include_usage);
  EXPECT_TRUE(p.ignore_eos);
  EXPECT_FALSE(p.speculative);
  EXPECT_TRUE(parse("{}").speculative);
  EXPECT_EQ(p.user, "u1");
}

TEST(GenerationParams, MaxCompletionTokensWinsAndStopMayBeAString) {
  const GenerationParams p = parse(R"({"max_tokens": 5, "max_completion_tokens": 9, "stop": "\n"})");
  EXPECT_EQ(p.max_tokens, 9);
  EXPECT_EQ(p.stop, (std::vector<std::string>{"\n"}));
  EXPECT_EQ(parse(R"({"n": 2.0})").n, 2);  // JavaScript numbers
}

TEST(GenerationParams, OutOfRangeValuesAre400NamingTheField) {
  EXPECT_EQ(error_of(R"({"temperature": -0.1})"), std::make_pair(400, std::string("temperature")));
  EXPECT_EQ(error_of(R"({"temperature": 2.5})").second, "temperature");
  EXPECT_EQ(error_of(R"({"top_p": 0})").second, "top_p");
  EXPECT_EQ(error_of(R"({"top_p": 1.01})").second, "top_p");
  EXPECT_EQ(error_of(R"({"max_tokens": 0})").second, "max_tokens");
  EXPECT_EQ(error_of(R"({"max_tokens": -3})").second, "max_tokens");
  EXPECT_EQ(error_of(R"({"max_tokens": 100000})").second, "max_tokens");
  EXPECT_EQ(error_of(R"({"n": 9})").second, "n");
  EXPECT_EQ(error_of(R"({"n": 0})").second, "n");
  EXPECT_EQ(error_of(R"({"presence_penalty": 3})").second, "presence_penalty");
  EXPECT_EQ(error_of(R"({"logit_bias": {"512": 1}})").second, "logit_bias");
  EXPECT_EQ(error_of(R"({"logit_bias": {"x": 1}})").second, "logit_bias");
  EXPECT_EQ(error_of(R"({"logit_bias": {"3": 101}})").second, "logit_bias");
  EXPECT_EQ(error_of(R"({"top_logprobs": 2})").second, "top_logprobs");  // needs logprobs: true
  EXPECT_EQ(error_of(R"({"logprobs": true, "top_logprobs": 21})").second, "top_logprobs");
  EXPECT_EQ(error_of(R"({"seed": 1e300})").second, "seed");
}

TEST(GenerationParams, WrongTypesAre400) {
  EXPECT_EQ(error_of(R"({"temperature": "hot"})").second, "temperature");
  EXPECT_EQ(error_of(R"({"n": 1.5})").second, "n");
  EXPECT_EQ(error_of(R"({"stream": 1})").second, "stream");
  EXPECT_EQ(error_of(R"({"stop": 5})").second, "stop");
  EXPECT_EQ(error_of(R"({"stop": ["a", 1]})").second, "stop");
  EXPECT_EQ(error_of(R"({"user": 7})").second, "user");
  EXPECT_EQ(error_of(R"({"stream_options": true})").second, "stream_options");
  EXPECT_EQ(error_of(R"({"logit_bias": [1]})").second, "logit_bias");
}

TEST(GenerationParams, CompletionsTakeLogprobsAsACount) {
  EXPECT_EQ(parse(R"({"logprobs": 2})", LogprobsStyle::Completions).top_logprobs, 2);
  EXPECT_EQ(parse(R"({"logprobs": 0})", LogprobsStyle::Completions).top_logprobs, 0);
  EXPECT_EQ(error_of(R"({"logprobs": 6})", LogprobsStyle::Completions).second, "logprobs");
  EXPECT_EQ(error_of(R"({"logprobs": 2})", LogprobsStyle::Chat).second, "logprobs");
}

TEST(GenerationParams, NullMeansAbsent) {
  const GenerationParams p = parse(R"({"temperature": null, "stop": null, "seed": null})");
  EXPECT_FLOAT_EQ(p.sampling.temperature, 1.0f);
  EXPECT_TRUE(p.stop.empty());
  EXPECT_FALSE(p.seeded);
}

TEST(GenerationParams, PriorityDefaultsToTheKeysAndMayNotRunAheadOfIt) {
  EXPECT_EQ(parse("{}").priority, 0);
  EXPECT_EQ(parse(R"({"priority": -7})").priority, -7);  // no keys: any priority
  EXPECT_EQ(error_of(R"({"priority": 1.5})"), std::make_pair(400, std::string("priority")));
  EXPECT_EQ(error_of(R"({"priority": 2000000})"), std::make_pair(400, std::string("priority")));
  ParamLimits keyed = kLimits;
  keyed.priority_floor = true;
  keyed.default_priority = 10;
  EXPECT_EQ(parse_generation_params(json::parse("{}"), keyed, LogprobsStyle::Chat).priority, 10);
  EXPECT_EQ(parse_generation_params(json::parse(R"({"priority": 12})"), keyed, LogprobsStyle::Chat).priority, 12);
  EXPECT_THROW(parse_generation_params(json::parse(R"({"priority": 9})"), keyed, LogprobsStyle::Chat), ApiError);
}

TEST(GenerationParams, TruncatePromptTokensIsAtMostTheContext) {
  EXPECT_EQ(parse("{}").truncate_prompt_tokens, 0);
  EXPECT_EQ(parse(R"({"truncate_prompt_tokens": 100})").truncate_prompt_tokens, 100);
  for (const char* bad : {R"({"truncate_prompt_tokens": 0})", R"({"truncate_prompt_tokens": 513})",
                          R"({"truncate_prompt_tokens": "5"})"})
    EXPECT_EQ(error_of(bad), std::make_pair(400, std::string("truncate_prompt_tokens"))) << bad;
}

TEST(JsonBody, ContentTypeAndSyntax) {
  HttpRequest r;
  r.body = R"({"a": 1})";
  EXPECT_EQ(parse_json_body(r)["a"], 1);  // no Content-Type: accepted
  r.headers = {{"content-type", "application/json; charset=utf-8"}};
  EXPECT_EQ(parse_json_body(r)["a"], 1);
  auto status_of = [](const HttpRequest& req) {
    try {
      parse_json_body(req);
    } catch (const ApiError& e) {
      return e.status();
    }
    return 0;
  };
  r.headers = {{"content-type", "text/plain"}};
  EXPECT_EQ(status_of(r), 415);
  r.headers = {{"content-type", "application/json"}};
  for (const char* bad : {"{", "[1, 2]", "\"x\"", "", "{\"a\": \"\xff\xfe\"}", "{\"a\": \"\xc3\"}"}) {
    r.body = bad;
    EXPECT_EQ(status_of(r), 400) << bad;
  }
  r.body = std::string(100000, '[') + std::string(100000, ']');  // deep nesting: an error, not a crash
  EXPECT_EQ(status_of(r), 400);
}

}  // namespace
}  // namespace parley::serve
