#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "model/lora_files.h"
#include "model/model.h"
#include "serve/sessions/cached_answer.h"
#include "test_events.h"

namespace parley::serve {
namespace {

using test::token_event;

Event final_event(FinishReason finish) {
  Event e;
  e.final = true;
  e.finish = finish;
  e.prompt_tokens = 12;
  e.completion_tokens = 2;
  e.cached_tokens = 8;
  return e;
}

TEST(CachedAnswer, EncodesAndDecodesEveryEventField) {
  RecordedAnswer a;
  a.choices = {{token_event(5, "Once"), token_event(9, " upon \xc3\xa9"), final_event(FinishReason::Length)},
               {token_event(3, ""), final_event(FinishReason::Stop)}};
  a.choices[1][1].stop_string = "The end";
  const auto b = decode_answer(encode_answer(a));
  ASSERT_TRUE(b);
  ASSERT_EQ(b->choices.size(), 2u);
  ASSERT_EQ(b->choices[0].size(), 3u);
  EXPECT_EQ(b->choices[0][1].text, " upon \xc3\xa9");
  EXPECT_EQ(b->choices[0][1].token, 9);
  EXPECT_FLOAT_EQ(b->choices[0][1].logprob, -0.5f);
  ASSERT_EQ(b->choices[0][1].top_logprobs.size(), 2u);
  EXPECT_EQ(b->choices[0][1].top_logprobs[1].token, 3);
  EXPECT_FLOAT_EQ(b->choices[0][1].top_logprobs[1].logprob, -2.0f);
  const Event& end = b->choices[0][2];
  EXPECT_TRUE(end.final);
  EXPECT_EQ(end.finish, FinishReason::Length);
  EXPECT_EQ(end.prompt_tokens, 12);
  EXPECT_EQ(end.completion_tokens, 2);
  EXPECT_EQ(end.cached_tokens, 8);
  EXPECT_EQ(b->choices[1][1].finish, FinishReason::Stop);
  EXPECT_EQ(b->choices[1][1].stop_string, "The end");
  EXPECT_EQ(end.stop_string, "");
}

TEST(CachedAnswer, CorruptEntriesAreMisses) {
  EXPECT_FALSE(decode_answer(""));
  EXPECT_FALSE(decode_answer("not json"));
  EXPECT_FALSE(decode_answer(R"({"v": 2, "choices": []})"));
  EXPECT_FALSE(decode_answer(R"({"v": 1, "choices": []})"));
  EXPECT_FALSE(decode_answer(R"({"v": 1, "choices": [[{"t": 1, "x": "a", "l": 0, "k": []}]]})"));  // no final event
  EXPECT_FALSE(decode_answer(R"({"v": 1, "choices": [[{"t": "x"}]]})"));
}

TEST(CachedAnswer, FixedAnswerIsOneStoppedChoice) {
  const RecordedAnswer a = fixed_answer("Parley is a server.", 10, 5);
  ASSERT_EQ(a.choices.size(), 1u);
  ASSERT_EQ(a.choices[0].size(), 2u);
  EXPECT_EQ(a.choices[0][0].text, "Parley is a server.");
  EXPECT_EQ(a.choices[0][1].finish, FinishReason::Stop);
  EXPECT_EQ(a.choices[0][1].prompt_tokens, 10);
  EXPECT_EQ(a.choices[0][1].completion_tokens, 5);
}

TEST(CachedAnswer, OnlyGreedyOrSeededRequestsAreCacheable) {
  GenerationParams p;
  p.sampling.temperature = 0.7f;
  EXPECT_FALSE(is_cacheable(p));
  p.seeded = true;
  EXPECT_TRUE(is_cacheable(p));
  p.seeded = false;
  p.sampling.temperature = 0;
  EXPECT_TRUE(is_cacheable(p));
}

Request base_request() {
  Request r;
  r.prompt = {1, 2, 3};
  r.sampling.temperature = 0;
  r.max_tokens = 16;
  return r;
}

std::string key_of(const Request& r, bool seeded = false) { return response_cache_key({"m", "fp", ""}, {r}, seeded); }

TEST(CachedAnswer, KeyCoversEveryOutputChangingField) {
  const Request base = base_request();
  const std::string k = key_of(base);
  EXPECT_EQ(k.size(), 40u);
  EXPECT_EQ(k, key_of(base));
  EXPECT_NE(k, response_cache_key({"other", "fp", ""}, {base}, false));
  EXPECT_NE(k, response_cache_key({"m", "fp2", ""}, {base}, false));
  EXPECT_NE(k, response_cache_key({"m", "fp", "team-a"}, {base}, false));  // another tenant
  EXPECT_NE(response_cache_key({"m", "fp", "team-a"}, {base}, false), response_cache_key({"m", "fp", "team-b"}, {base}, false));
  EXPECT_NE(k, response_cache_key({"m", "fp", ""}, {base, base}, false));  // n = 2
  EXPECT_NE(k, response_cache_key({"m", "fp", "", "json_object"}, {base}, false));  // held to a format
  const std::vector<std::function<void(Request&)>> changes = {
      [](Request& r) { r.prompt.push_back(4); },
      [](Request& r) { r.sampling.temperature = 0.5f; },
      [](Request& r) { r.sampling.top_k = 5; },
      [](Request& r) { r.sampling.top_p = 0.5f; },
      [](Request& r) { r.sampling.min_p = 0.1f; },
      [](Request& r) { r.sampling.repetition_penalty = 1.1f; },
      [](Request& r) { r.sampling.frequency_penalty = 0.5f; },
      [](Request& r) { r.sampling.presence_penalty = 0.5f; },
      [](Request& r) { r.sampling.logit_bias = {{3, 5.0f}}; },
      [](Request& r) { r.max_tokens = 17; },
      [](Request& r) { r.stop_strings = {"\n"}; },
      [](Request& r) { r.stop_ids = {2}; },
      [](Request& r) { r.ignore_eos = true; },
      [](Request& r) { r.top_logprobs = 2; },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    Request r = base;
    changes[i](r);
    EXPECT_NE(key_of(r), k) << "change " << i;
  }
  // Strings are length-prefixed: ["ab", "c"] and ["a", "bc"] differ.
  Request a = base, b = base;
  a.stop_strings = {"ab", "c"};
  b.stop_strings = {"a", "bc"};
  EXPECT_NE(key_of(a), key_of(b));
}

// The adapter counts by its file and scale: not by its per-process id, so
// that replicas sharing a cache (and an adapter loaded again) share entries.
TEST(CachedAnswer, KeyCoversTheLoraAdapterByFileAndScale) {
  const std::string bundled = PARLEY_SOURCE_DIR "/models/stories260K.gguf";
  const auto model = Model::load(bundled);
  const auto dir = std::filesystem::temp_directory_path();
  const std::string a_path = (dir / ("parley-cache-lora-a-" + std::to_string(::getpid()))).string();
  const std::string b_path = (dir / ("parley-cache-lora-b-" + std::to_string(::getpid()))).string();
  MkAdapterSpec spec;
  write_random_adapter(bundled, spec, a_path);
  spec.seed = 2;
  write_random_adapter(bundled, spec, b_path);
  std::shared_ptr<const LoraAdapter> a = LoraAdapter::load(a_path, *model), a_again = LoraAdapter::load(a_path, *model),
                                     b = LoraAdapter::load(b_path, *model);
  std::filesystem::remove(a_path);
  std::filesystem::remove(b_path);
  const auto with = [](std::shared_ptr<const LoraAdapter> adapter, float scale = 1.0f) {
    Request r = base_request();
    r.lora = std::move(adapter);
    r.lora_scale = scale;
    return key_of(r);
  };
  EXPECT_NE(with(a), key_of(base_request()));
  EXPECT_NE(with(a), with(b));
  EXPECT_NE(with(a), with(a, 0.5f));
  EXPECT_EQ(with(a), with(a_again));
}

TEST(CachedAnswer, RandomSeedIsLeftOutUnlessTheClientGaveIt) {
  Request a = base_request(), b = base_request();
  a.sampling.seed = 1;
  b.sampling.seed = 2;
  EXPECT_EQ(key_of(a), key_of(b));
  EXPECT_NE(key_of(a, true), key_of(b, true));
}

}  // namespace
}  // namespace parley::serve
