// stories260K greedy generations against llama2.c's run.c outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/generator.h"
#include "model/model.h"

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
  ThreadPool pool(2);
  for (const auto& g : cases) {
    SCOPED_TRACE(g.prompt);
    const auto ids = model.tokenizer().encode(g.prompt, true, false);
    EXPECT_EQ(ids, g.prompt_ids);
    Generator gen(model, pool, g.total_positions);
    GenerateOptions opts;
    opts.sampling.temperature = 0;
    opts.max_tokens = 1 << 20;
    const auto r = gen.run(g.prompt_ids, opts);
    EXPECT_EQ(r.tokens, g.generated_ids);
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

TEST(Generator, ReusesCachedPrefixAcrossTurns) {
  auto model = Model::load(PARLEY_SOURCE_DIR "/models/stories260K.gguf");
  ThreadPool pool(1);
  Generator gen(*model, pool);
  GenerateOptions opts;
  opts.sampling.temperature = 0;
  opts.max_tokens = 10;
  const std::vector<int32_t> first = {1, 403, 407, 261, 378};
  const auto r1 = gen.run(first, opts);
  EXPECT_EQ(r1.prefilled_tokens, 5);
  std::vector<int32_t> second = first;
  second.insert(second.end(), r1.tokens.begin(), r1.tokens.end());
  second.push_back(13);
  const auto r2 = gen.run(second, opts);
  // Everything but the last generated token (never evaluated) and the new one is cached.
  EXPECT_EQ(r2.prefilled_tokens, 2);
  // Same continuation as a fresh generator evaluating everything.
  Generator fresh(*model, pool);
  const auto r3 = fresh.run(second, opts);
  EXPECT_EQ(r3.prefilled_tokens, int32_t(second.size()));
  EXPECT_EQ(r2.tokens, r3.tokens);
}

TEST(Generator, StopStringsAndMaxTokens) {
  auto model = Model::load(PARLEY_SOURCE_DIR "/models/stories260K.gguf");
  ThreadPool pool(1);
  Generator gen(*model, pool);
  GenerateOptions opts;
  opts.sampling.temperature = 0;
  opts.max_tokens = 50;
  const auto ids = model->tokenizer().encode("Once upon a time", true, false);
  const auto full = gen.run(ids, opts);
  EXPECT_EQ(full.finish, FinishReason::Length);
  EXPECT_EQ(full.tokens.size(), 50u);
  ASSERT_GT(full.text.size(), 20u);
  // Stop at a string that straddles tokens in the middle of the text.
  const std::string stop = full.text.substr(10, 5);
  opts.stop_strings = {stop};
  const auto stopped = gen.run(ids, opts);
  EXPECT_EQ(stopped.finish, FinishReason::Stop);
  EXPECT_EQ(stopped.text, full.text.substr(0, full.text.find(stop)));
}

}  // namespace
}  // namespace parley
