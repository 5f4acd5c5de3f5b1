// stories260K greedy generations against llama2.c's run.c outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/run_request.h"
#include "model/model.h"
#include "util/error.h"

namespace parley {
namespace {

const std::string kShared = PARLEY_SHARED_DIR;

struct Golden {
  std::string prompt;
  std::vector<int32_t> prompt_ids, generated_ids;
  int32_t total_positions;
};

std::vector<Golden> read_golden() {
  std::vector<Golden> out;
  std::ifstream in(kShared + "/golden/stories260K-greedy.jsonl");
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    out.push_back({j["prompt"], j["prompt_ids"], j["generated_ids"], j["total_positions"]});
  }
  return out;
}

// run.c samples at every position until total_positions are used.
void expect_golden(const Model& model) {
  const auto cases = read_golden();
  ASSERT_FALSE(cases.empty());
  for (const auto& g : cases) {
    SCOPED_TRACE(g.prompt);
    const auto ids = model.tokenizer().encode(g.prompt, true, false);
    EXPECT_EQ(ids, g.prompt_ids);
    EngineConfig c;
    c.threads = 2;
    c.kv_type = DType::F32;
    // The engine's context counts every token of a sequence (vLLM's
    // max_model_len); run.c's steps count the positions evaluated, which
    // leave out the last token sampled.
    c.max_context = g.total_positions + 1;
    LlmEngine engine(model, c);
    Request r;
    r.prompt = g.prompt_ids;
    r.sampling.temperature = 0;
    r.max_tokens = 1 << 20;
    EXPECT_EQ(run_request(engine, r).tokens, g.generated_ids);
  }
}

TEST(Golden, Llama2cCheckpointMatchesRunC) {
  if (!std::filesystem::exists(kShared + "/golden/stories260K-greedy.jsonl"))
    GTEST_SKIP() << "../shared/golden not present";
  auto model = Model::load(kShared + "/models/stories260K.bin", kShared + "/models/tok512.bin");
  expect_golden(*model);
}

TEST(Golden, GgufMatchesRunC) {
  if (!std::filesystem::exists(kShared + "/golden/stories260K-greedy.jsonl"))
    GTEST_SKIP() << "../shared/golden not present";
  auto model = Model::load(kShared + "/models/stories260K.gguf");
  expect_golden(*model);
}

TEST(Golden, BundledModelIsTheSharedOne) {
  auto bundled = Model::load(PARLEY_SOURCE_DIR "/models/stories260K.gguf");
  if (!std::filesystem::exists(kShared + "/golden/stories260K-greedy.jsonl"))
    GTEST_SKIP() << "../shared/golden not present";
  expect_golden(*bundled);
}

// How `chat` runs its turns: the second turn re-uses the first's KV blocks.
TEST(RunRequest, ReusesCachedPrefixAcrossTurns) {
  auto model = Model::load(PARLEY_SOURCE_DIR "/models/stories260K.gguf");
  EngineConfig c;
  c.threads = 1;
  c.kv_type = DType::F32;
  LlmEngine engine(*model, c);
  Request r;
  r.sampling.temperature = 0;
  r.max_tokens = 20;
  r.prompt = model->tokenizer().encode("Once upon a time, there was a little girl named Lily. She", true, false);
  const auto r1 = run_request(engine, r);
  EXPECT_EQ(r1.prefilled_tokens(), r1.prompt_tokens);
  r.prompt.insert(r.prompt.end(), r1.tokens.begin(), r1.tokens.end());
  r.prompt.push_back(13);
  const auto r2 = run_request(engine, r);
  // Whole 16-token blocks of the first turn's prompt and answer come from the cache.
  const int32_t reusable = (int32_t(r.prompt.size()) - 2) / c.block_size * c.block_size;
  EXPECT_EQ(r2.cached_tokens, reusable);
  // Same continuation as an engine evaluating everything.
  c.prefix_cache = false;
  LlmEngine fresh(*model, c);
  const auto r3 = run_request(fresh, r);
  EXPECT_EQ(r3.prefilled_tokens(), int32_t(r.prompt.size()));
  EXPECT_EQ(r2.tokens, r3.tokens);
}

TEST(RunRequest, StopStringsAndMaxTokens) {
  auto model = Model::load(PARLEY_SOURCE_DIR "/models/stories260K.gguf");
  EngineConfig c;
  c.threads = 1;
  LlmEngine engine(*model, c);
  Request r;
  r.sampling.temperature = 0;
  r.max_tokens = 50;
  r.prompt = model->tokenizer().encode("Once upon a time", true, false);
  std::string streamed;
  const auto full = run_request(engine, r, [&](std::string_view text) { streamed += text; });
  EXPECT_EQ(full.finish, FinishReason::Length);
  EXPECT_EQ(full.tokens.size(), 50u);
  EXPECT_EQ(streamed, full.text);
  ASSERT_GT(full.text.size(), 20u);
  EXPECT_GT(full.decode_tok_s(), 0.0);
  EXPECT_GE(full.last_token_ms, full.first_token_ms);
  // Stop at a string that straddles tokens in the middle of the text.
  const std::string stop = full.text.substr(10, 5);
  r.stop_strings = {stop};
  const auto stopped = run_request(engine, r);
  EXPECT_EQ(stopped.finish, FinishReason::Stop);
  EXPECT_EQ(stopped.text, full.text.substr(0, full.text.find(stop)));
}

TEST(RunRequest, EngineErrorsAreThrown) {
  auto model = Model::load(PARLEY_SOURCE_DIR "/models/stories260K.gguf");
  LlmEngine engine(*model, EngineConfig{});
  Request r;
  r.max_tokens = 5;
  EXPECT_THROW(run_request(engine, r), Error);  // an empty prompt
}

}  // namespace
}  // namespace parley
