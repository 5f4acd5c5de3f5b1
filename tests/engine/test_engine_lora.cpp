// LoRA adapters in the engine: requests with different adapters and none in
// one batch answer as each alone, and the prefix cache never shares K/V
// between adapters.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "engine/llm_engine.h"
#include "engine_test_util.h"
#include "model/lora_files.h"

namespace parley::engine_lora_test {  // own helper names in the unity build
namespace {

EngineConfig lora_config() {
  EngineConfig c;
  c.threads = 1;
  c.max_batch_tokens = 24;  // prompts are prefilled in several chunks, mixed with decodes
  c.prefix_cache = true;
  c.kv_type = DType::F32;
  return c;
}

// Adapters of ranks 1, 4, 8 and 16 for the bundled model, written and loaded once.
class EngineLora : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = Model::load(testing::kBundled);
    const int32_t ranks[] = {1, 4, 8, 16};
    for (int32_t i = 0; i < 4; ++i) {
      const std::string path = (std::filesystem::temp_directory_path() /
                                ("parley-engine-lora-" + std::to_string(::getpid()) + "-" + std::to_string(i)))
                                   .string();
      MkAdapterSpec spec;
      spec.rank = ranks[i];
      spec.seed = uint64_t(10 + i);
      spec.strength = 2.0f;  // enough to change greedy choices
      write_random_adapter(testing::kBundled, spec, path);
      adapters_.push_back(LoraAdapter::load(path, *model_));
      std::filesystem::remove(path);
    }
  }
  Request with(const std::vector<int32_t>& prompt, int32_t adapter, int32_t max_tokens = 16) {
    Request r = testing::greedy(prompt, max_tokens);
    if (adapter >= 0) r.lora = adapters_[size_t(adapter)];
    return r;
  }
  std::unique_ptr<Model> model_;
  std::vector<std::shared_ptr<const LoraAdapter>> adapters_;
};

TEST_F(EngineLora, MixedAdaptersAnswerAsEachAlone) {
  std::vector<Request> requests;
  for (int32_t i = 0; i < 10; ++i) requests.push_back(with(testing::prompt(5 + 7 * i, i), i % 5 - 1));
  requests[3].lora_scale = 0.5f;
  const auto alone = testing::run_alone(*model_, lora_config(), requests);
  LlmEngine engine(*model_, lora_config());
  testing::expect_same_outcomes(testing::run_together(engine, requests), alone);
  // The adapters change the answers: the same prompts on the base model differ.
  std::vector<Request> base = requests;
  for (Request& r : base) r.lora = nullptr;
  const auto plain = testing::run_alone(*model_, lora_config(), base);
  int32_t differ = 0;
  for (size_t i = 0; i < requests.size(); ++i) differ += requests[i].lora && plain[i].tokens != alone[i].tokens;
  EXPECT_GE(differ, 6);
}

TEST_F(EngineLora, PrefixCacheIsPerAdapter) {
  LlmEngine engine(*model_, lora_config());
  const auto p = testing::prompt(50, 3);
  auto once = [&](int32_t adapter) { return testing::run_together(engine, {with(p, adapter)})[0]; };
  const auto a = once(0);
  EXPECT_EQ(a.final.cached_tokens, 0);
  const auto base = once(-1);
  EXPECT_EQ(base.final.cached_tokens, 0);  // adapter 0's blocks are not the base model's
  const auto b = once(1);
  EXPECT_EQ(b.final.cached_tokens, 0);
  const auto a2 = once(0);
  EXPECT_EQ(a2.final.cached_tokens, 48);  // its own blocks are
  EXPECT_EQ(a2.tokens, a.tokens);
  EXPECT_EQ(once(-1).final.cached_tokens, 48);
  const auto alone = testing::run_alone(*model_, lora_config(), {with(p, -1), with(p, 1)});
  EXPECT_EQ(base.tokens, alone[0].tokens);
  EXPECT_EQ(b.tokens, alone[1].tokens);
}

TEST_F(EngineLora, AdapterOfAnotherModelIsRefused) {
  auto other = Model::load(testing::kBundled);  // the same file, but not the engine's model
  LlmEngine engine(*other, lora_config());
  const auto got = testing::run_together(engine, {with(testing::prompt(8), 0)})[0];
  EXPECT_EQ(got.final.finish, FinishReason::Error);
  EXPECT_NE(got.final.error.find("another model"), std::string::npos) << got.final.error;
}

}  // namespace
}  // namespace parley::engine_lora_test
