#include <gtest/gtest.h>

#include <filesystem>

#include "model/model.h"
#include "serve/api/openai_format.h"
#include "serve/api/request_builder.h"
#include "serve/transport/api_error.h"
#include "serve/transport/sse.h"
#include "test_events.h"

namespace parley::serve {
namespace {

class OpenAiFormat : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = std::string(PARLEY_SOURCE_DIR) + "/models/stories260K.gguf";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "bundled model missing: " << path;
    model_ = Model::load(path);
  }
  const Tokenizer& tok() const { return model_->tokenizer(); }
  std::unique_ptr<Model> model_;
};

using test::token_event;

Event final_event(FinishReason r, int32_t prompt, int32_t completion) {
  Event e;
  e.final = true;
  e.finish = r;
  e.prompt_tokens = prompt;
  e.completion_tokens = completion;
  return e;
}

TEST_F(OpenAiFormat, ChatResponseShape) {
  std::vector<Choice> choices(2);
  for (Choice& c : choices) {
    c.add(token_event(403, "Once"), true);
    c.add(final_event(FinishReason::Length, 10, 1), true);
  }
  const ResponseMeta meta = make_meta(Api::Chat, "stories260K", "fp_x", true);
  const json r = full_response(meta, choices, tok());
  EXPECT_EQ(r["object"], "chat.completion");
  EXPECT_EQ(r["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(r["model"], "stories260K");
  EXPECT_EQ(r["system_fingerprint"], "fp_x");
  EXPECT_TRUE(r["created"].is_number_integer());
  ASSERT_EQ(r["choices"].size(), 2u);
  EXPECT_EQ(r["choices"][1]["index"], 1);
  EXPECT_EQ(r["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(r["choices"][0]["message"]["content"], "Once");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  const json lp = r["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(lp.size(), 1u);
  EXPECT_EQ(lp[0]["token"], tok().token_to_piece(403, true));
  EXPECT_FLOAT_EQ(lp[0]["logprob"].get<float>(), -0.5f);
  EXPECT_EQ(lp[0]["top_logprobs"].size(), 2u);
  // n choices of one prompt: the prompt counts once.
  EXPECT_EQ(r["usage"]["prompt_tokens"], 10);
  EXPECT_EQ(r["usage"]["completion_tokens"], 2);
  EXPECT_EQ(r["usage"]["total_tokens"], 12);
}

TEST_F(OpenAiFormat, CompletionsLogprobsAreParallelArrays) {
  std::vector<Choice> choices(1);
  choices[0].add(token_event(403, "Once"), true);
  choices[0].add(token_event(3, "x"), true);
  choices[0].add(final_event(FinishReason::Stop, 4, 2), true);
  const json r = full_response(make_meta(Api::Completions, "m", "fp", true), choices, tok());
  EXPECT_EQ(r["object"], "text_completion");
  EXPECT_EQ(r["choices"][0]["text"], "Oncex");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");
  const json lp = r["choices"][0]["logprobs"];
  EXPECT_EQ(lp["tokens"].size(), 2u);
  EXPECT_EQ(lp["token_logprobs"].size(), 2u);
  EXPECT_EQ(lp["top_logprobs"].size(), 2u);
  EXPECT_EQ(lp["text_offset"][1], tok().token_to_piece(403, true).size());
}

TEST_F(OpenAiFormat, ChatChunks) {
  const ResponseMeta meta = make_meta(Api::Chat, "m", "fp", false);
  const json first = stream_chunk(meta, {0, "", {}, 0, true, std::nullopt}, tok());
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"], json({{"role", "assistant"}, {"content", ""}}));
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(first["choices"][0]["logprobs"].is_null());
  const json text = stream_chunk(meta, {1, "Hi", {}, 0, false, std::nullopt}, tok());
  EXPECT_EQ(text["choices"][0]["index"], 1);
  EXPECT_EQ(text["choices"][0]["delta"], json({{"content", "Hi"}}));
  const json last = stream_chunk(meta, {0, "", {}, 2, false, FinishReason::Stop}, tok());
  EXPECT_EQ(last["choices"][0]["delta"], json::object());
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(last["id"], first["id"]);
  const json usage = usage_chunk(meta, Usage{3, 4, 1});
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["total_tokens"], 7);
  EXPECT_EQ(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 1);
}

TEST(Sse, Framing) {
  EXPECT_EQ(sse_event(json{{"a", 1}}), "data: {\"a\":1}\n\n");
  EXPECT_STREQ(kSseDone, "data: [DONE]\n\n");
  // Half a UTF-8 character (a token piece) never breaks serialisation.
  EXPECT_EQ(sse_event(json{{"t", std::string("\xe2\x96")}}), "data: {\"t\":\"\xef\xbf\xbd\"}\n\n");
}

TEST(RequestBuilder, ChoicesGetConsecutiveSeedsAndTheRestOfTheContext) {
  GenerationParams p;
  p.n = 3;
  p.sampling.seed = 100;
  p.stop = {"x"};
  const EngineRequests r = build_requests(p, {{1, 2, 3}, {1, 5}}, 16);
  ASSERT_EQ(r.requests.size(), 6u);
  EXPECT_EQ(r.requests[2].sampling.seed, 102u);
  EXPECT_EQ(r.requests[3].sampling.seed, 100u);
  EXPECT_EQ(r.prompt_index, (std::vector<size_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(r.requests[0].max_tokens, 13);
  EXPECT_EQ(r.requests[4].max_tokens, 14);
  EXPECT_EQ(r.requests[4].stop_strings, p.stop);
  p.max_tokens = 4;
  EXPECT_EQ(build_requests(p, {{1}}, 16).requests[0].max_tokens, 4);
}

TEST(RequestBuilder, TruncationKeepsThePromptsEndAndPriorityIsTurnedForTheEngine) {
  GenerationParams p;
  p.truncate_prompt_tokens = 3;
  p.priority = -4;  // the API's lower-first
  std::vector<int32_t> long_prompt(40);
  for (int32_t i = 0; i < 40; ++i) long_prompt[size_t(i)] = i;
  const EngineRequests r = build_requests(p, {long_prompt, {7, 8}}, 16);
  EXPECT_EQ(r.requests[0].prompt, (std::vector<int32_t>{37, 38, 39}));
  EXPECT_EQ(r.requests[0].max_tokens, 13);
  EXPECT_EQ(r.requests[1].prompt, (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(r.requests[0].priority, 4);  // the engine's higher-first
}

TEST(RequestBuilder, PromptsThatDoNotFitAre400) {
  GenerationParams p;
  try {
    build_requests(p, {std::vector<int32_t>(16, 1)}, 16);
    FAIL() << "a prompt as long as the context was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.to_json()["error"]["code"], "context_length_exceeded");
  }
  EXPECT_THROW(build_requests(p, {{}}, 16), ApiError);
}

}  // namespace
}  // namespace parley::serve
