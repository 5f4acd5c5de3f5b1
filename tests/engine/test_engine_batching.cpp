// Continuous batching gives each request exactly the tokens it gets alone:
// greedy and seeded sampling, prefix cache on and off, chunked prefill, and
// preemption in a tiny KV pool. Also: prefix reuse, measured by counters.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "engine_test_util.h"
#include "model/mkmodel.h"
#include "model/sequence_forward.h"

namespace parley {
namespace {

using testing::Outcome;

std::vector<Request> mixed_requests(const Model& model) {
  const Tokenizer& tok = model.tokenizer();
  const std::string shared = "Once upon a time, there was a little girl named Lily. She loved to play outside.";
  const char* texts[] = {"Once upon a time", "The cat sat", "Tom and his dog went to the park",
                         "One day", "Lily wanted"};
  std::vector<Request> out;
  for (int i = 0; i < 10; ++i) {
    const std::string text = i % 2 ? shared + " " + texts[i % 5] : std::string(texts[i % 5]);
    Request r = testing::greedy(tok.encode(text, true, false), 8 + 9 * i);
    if (i % 3 == 1) {  // seeded sampling
      r.sampling.temperature = 0.9f;
      r.sampling.top_p = 0.95f;
      r.sampling.seed = 1000 + uint64_t(i);
    }
    if (i == 4) r.stop_strings = {"."};
    out.push_back(r);
  }
  return out;
}

void expect_same(const std::vector<Outcome>& got, const std::vector<Outcome>& want) {
  expect_same_outcomes(got, want);
  for (const Outcome& o : got) EXPECT_FALSE(o.tokens.empty());
}

EngineConfig small_config(bool prefix_cache) {
  EngineConfig c;
  // One kernel thread: spinning pool workers crawl on a loaded 2-core machine.
  c.threads = 1;
  c.max_batch_tokens = 24;  // prompts are prefilled in several chunks
  c.prefix_cache = prefix_cache;
  c.kv_type = DType::F32;
  return c;
}

// Two kernel threads: attention jobs of several KV heads, the pool's hand-offs.
EngineConfig two_thread_config() {
  EngineConfig c = small_config(true);
  c.threads = 2;
  return c;
}

TEST(EngineBatching, ConcurrentRequestsGiveTheirAloneTokens) {
  auto model = Model::load(testing::kBundled);
  const auto requests = mixed_requests(*model);
  const auto alone = testing::run_alone(*model, small_config(false), requests);
  for (bool prefix : {false, true}) {
    SCOPED_TRACE(prefix ? "prefix cache on" : "prefix cache off");
    LlmEngine engine(*model, small_config(prefix));
    expect_same(testing::run_together(engine, requests), alone);
    const EngineStats s = engine.stats();
    EXPECT_EQ(s.requests_finished, requests.size());
    EXPECT_EQ(s.kv_blocks_used, 0u);
    EXPECT_EQ(s.running + s.waiting, 0);
    if (prefix) EXPECT_GT(s.prefix_cache_hit_tokens, 0u);
    else EXPECT_EQ(s.prefix_cache_hit_tokens, 0u);
  }
}

// The greedy tokens of one sequence without the engine: the forward pass
// and an argmax, until max_tokens or an end-of-generation token.
std::vector<int32_t> argmax_tokens(const Model& model, const Request& r) {
  ThreadPool pool(1);
  SequenceForward f(model, pool);
  const int32_t vocab = model.config().vocab_size;
  std::vector<int32_t> out;
  const float* logits = f.eval(r.prompt.data(), int32_t(r.prompt.size()));
  while (int32_t(out.size()) < r.max_tokens) {
    const auto id = int32_t(std::max_element(logits, logits + vocab) - logits);
    if (model.tokenizer().is_eog(id)) break;
    out.push_back(id);
    logits = f.eval(&id, 1);
  }
  return out;
}

// With F32 KV the engine's greedy output is a plain argmax loop's.
TEST(EngineBatching, GreedyMatchesArgmaxOfTheForwardPass) {
  auto model = Model::load(testing::kBundled);
  auto requests = mixed_requests(*model);
  LlmEngine engine(*model, small_config(true));
  const auto got = testing::run_together(engine, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].sampling.temperature != 0 || !requests[i].stop_strings.empty()) continue;
    EXPECT_EQ(got[i].tokens, argmax_tokens(*model, requests[i])) << "request " << i;
  }
}

TEST(EngineBatching, ReusedPrefixSkipsPrefill) {
  auto model = Model::load(testing::kBundled);
  EngineConfig c = small_config(true);
  LlmEngine engine(*model, c);
  const auto prompt = model->tokenizer().encode(
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the sun. One day she saw a big red ball.", true, false);
  ASSERT_GT(prompt.size(), 2u * size_t(c.block_size));
  const std::vector<Request> one = {testing::greedy(prompt, 20)};
  const auto first = testing::run_together(engine, one);
  const EngineStats before = engine.stats();
  EXPECT_EQ(before.prompt_tokens, prompt.size());
  EXPECT_EQ(first[0].final.cached_tokens, 0);
  const auto second = testing::run_together(engine, one);
  const EngineStats after = engine.stats();
  EXPECT_EQ(second[0].tokens, first[0].tokens);
  EXPECT_EQ(second[0].text, first[0].text);
  // Every full block of the prompt came from the cache.
  const uint64_t cached = prompt.size() / size_t(c.block_size) * size_t(c.block_size);
  EXPECT_EQ(uint64_t(second[0].final.cached_tokens), std::min<uint64_t>(cached, prompt.size() - 1));
  EXPECT_EQ(after.prefix_cache_hit_tokens - before.prefix_cache_hit_tokens, uint64_t(second[0].final.cached_tokens));
  EXPECT_EQ(after.prompt_tokens - before.prompt_tokens, prompt.size() - uint64_t(second[0].final.cached_tokens));
  EXPECT_GT(after.kv_blocks_cached, 0u);
  // The next turn of the conversation reuses the first turn too.
  std::vector<int32_t> turn = prompt;
  turn.insert(turn.end(), first[0].tokens.begin(), first[0].tokens.end());
  const auto third = testing::run_together(engine, {testing::greedy(turn, 5)});
  EXPECT_GE(third[0].final.cached_tokens, int32_t(cached));
  const auto fresh = testing::run_alone(*model, small_config(false), {testing::greedy(turn, 5)});
  EXPECT_EQ(third[0].tokens, fresh[0].tokens);
}

// n choices of one prompt, submitted together: the prompt is computed once,
// the others wait for its blocks instead of computing them again.
TEST(EngineBatching, IdenticalPromptsInABurstAreComputedOnce) {
  auto model = Model::load(testing::kBundled);
  std::vector<int32_t> prompt(50);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = i ? int32_t(260 + i * 3) : 1;
  std::vector<Request> choices;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    Request r = testing::greedy(prompt, 6);
    r.sampling.temperature = 1.0f;
    r.sampling.seed = seed;
    choices.push_back(r);
  }
  const auto alone = testing::run_alone(*model, small_config(false), choices);
  LlmEngine engine(*model, small_config(true));
  expect_same(testing::run_together(engine, choices), alone);
  // 50 tokens once, then 2 per other choice (3 full blocks of 16 are shared).
  EXPECT_EQ(engine.stats().prompt_tokens, 50u + 3 * 2);
  EXPECT_EQ(engine.stats().prefix_cache_hit_tokens, 3u * 48);
}

// A prompt of whole blocks, all cached: its last block is shared and must be
// copied before the last token is recomputed into it (copy-on-write).
TEST(EngineBatching, FullyCachedPromptCopiesItsLastBlock) {
  auto model = Model::load(testing::kBundled);
  LlmEngine engine(*model, small_config(true));
  std::vector<int32_t> prompt(32);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = i ? int32_t(300 + i) : 1;
  const std::vector<Request> twice = {testing::greedy(prompt, 12), testing::greedy(prompt, 12)};
  const auto first = testing::run_together(engine, {twice[0]});
  const auto both = testing::run_together(engine, twice);  // both share the cached blocks
  EXPECT_EQ(both[0].tokens, first[0].tokens);
  EXPECT_EQ(both[1].tokens, first[0].tokens);
  EXPECT_EQ(both[0].final.cached_tokens, 31);
  EXPECT_EQ(engine.stats().kv_blocks_used, 0u);
}

// --kv-prefault commits the pool up front; on two kernel threads (several
// KV heads per attention job) the requests still give their alone tokens.
TEST(EngineBatching, PrefaultedPoolGivesTheAloneTokens) {
  auto model = Model::load(testing::kBundled);
  const auto requests = mixed_requests(*model);
  const auto alone = testing::run_alone(*model, small_config(false), requests);
  EngineConfig c = two_thread_config();
  c.kv_prefault = true;
  c.kv_memory_bytes = 8u << 20;
  LlmEngine engine(*model, c);
  expect_same(testing::run_together(engine, requests), alone);
  EXPECT_EQ(engine.stats().requests_finished, requests.size());
}

TEST(EngineBatching, TinyKvPoolCompletesEverythingByPreemption) {
  auto model = Model::load(testing::kBundled);
  auto requests = mixed_requests(*model);
  for (auto& r : requests) r.max_tokens = 60;
  EngineConfig c = small_config(true);
  c.max_batch_tokens = 64;
  // About two sequences' worth of blocks for ten requests.
  const uint64_t block = uint64_t(model->config().n_layers) * 2 * 16 * uint64_t(model->config().kv_dim()) * 4;
  c.kv_memory_bytes = 12 * block;
  const auto alone = testing::run_alone(*model, small_config(false), requests);
  // Also under a step-time target below any step's (one block of prefill a step).
  for (const double target_ms : {0.0, 1e-6}) {
    SCOPED_TRACE("max_step_ms " + std::to_string(target_ms));
    c.max_step_ms = target_ms;
    LlmEngine engine(*model, c);
    expect_same(testing::run_together(engine, requests), alone);
    const EngineStats s = engine.stats();
    EXPECT_EQ(s.kv_blocks_total, 12u);
    EXPECT_GT(s.preemptions, 0u);
    EXPECT_EQ(s.kv_blocks_used, 0u);
    EXPECT_EQ(s.requests_finished, requests.size());
  }
}

// Under a step-time target the engine prefills only what its fit of past
// steps says fits: a target below any step's time leaves one block (16
// tokens) a step, so a 100-token prompt takes 7 steps; a generous target,
// or none, takes it in one. The tokens do not change.
TEST(EngineBatching, StepTimeTargetLimitsPrefillChunks) {
  auto model = Model::load(testing::kBundled);
  const Request warm = testing::greedy(testing::prompt(4), 2);  // a step to fit before the long prompt
  const Request longer = testing::greedy(testing::prompt(100, 5), 8);
  EngineConfig plain = small_config(false);
  plain.max_batch_tokens = 512;
  const auto alone = testing::run_alone(*model, plain, {longer});
  for (const double target_ms : {0.0, 1e-6, 1e6}) {
    SCOPED_TRACE("max_step_ms " + std::to_string(target_ms));
    EngineConfig c = plain;
    c.max_step_ms = target_ms;
    LlmEngine engine(*model, c);
    testing::run_together(engine, {warm});
    const uint64_t before = engine.stats().steps;
    const auto got = testing::run_together(engine, {longer});
    ASSERT_EQ(got[0].tokens.size(), 8u);
    const uint64_t prefill_steps = engine.stats().steps - before - uint64_t(got[0].tokens.size() - 1);
    EXPECT_EQ(prefill_steps, target_ms == 1e-6 ? 7u : 1u);
    EXPECT_EQ(got[0].tokens, alone[0].tokens);
  }
}

// Grouped-query attention (2 query heads per KV head) over a Q8_0 cache, on
// a random model with 32-dimension heads.
TEST(EngineBatching, GqaModelWithQ8_0Cache) {
  MkModelSpec spec;
  spec.dim = 128;
  spec.n_layers = 2;
  spec.n_heads = 4;
  spec.n_kv_heads = 2;
  spec.ffn_dim = 96;
  spec.context_length = 256;
  spec.vocab_from = testing::kBundled;
  const auto path = (std::filesystem::temp_directory_path() / ("parley-engine-" + std::to_string(::getpid()) + ".gguf")).string();
  write_random_model(spec, path);
  auto model = Model::load(path);
  auto requests = mixed_requests(*model);
  for (auto& r : requests) r.ignore_eos = true;  // random weights: stop only at max_tokens
  EngineConfig c = small_config(true);
  c.kv_type = DType::Q8_0;
  const auto alone = testing::run_alone(*model, c, requests);
  LlmEngine engine(*model, c);
  expect_same(testing::run_together(engine, requests), alone);
  std::filesystem::remove(path);
}

TEST(EngineBatching, SubmitFromManyThreads) {
  auto model = Model::load(testing::kBundled);
  const auto requests = mixed_requests(*model);
  const auto alone = testing::run_alone(*model, small_config(false), requests);
  LlmEngine engine(*model, two_thread_config());
  testing::Collector c;
  std::vector<RequestId> ids(requests.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < requests.size(); ++i)
    threads.emplace_back([&, i] { ids[i] = engine.submit(requests[i], c.sink()); });
  for (auto& t : threads) t.join();
  c.wait(int(requests.size()));
  std::vector<Outcome> got;
  for (RequestId id : ids) got.push_back(c.get(id));
  expect_same(got, alone);
}

}  // namespace
}  // namespace parley
