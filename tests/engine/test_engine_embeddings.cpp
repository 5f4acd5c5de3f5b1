// Embedding requests (Request::pooling): the pooled final hidden state of a
// prompt, batched with other requests, whatever the chunking or the prefix cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine_test_util.h"

namespace parley {
namespace {

using testing::Outcome;
using testing::prompt;
using testing::run_alone;
using testing::run_together;

Request embedding(std::vector<int32_t> tokens, Pooling pooling) {
  Request r;
  r.prompt = std::move(tokens);
  r.pooling = pooling;
  return r;
}

void expect_near_vectors(const std::vector<float>& a, const std::vector<float>& b, float tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], tolerance) << "element " << i;
}

class EngineEmbeddings : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { model_ = Model::load(testing::kBundled).release(); }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  static EngineConfig config() {
    EngineConfig c;
    c.threads = 2;
    c.max_batch_tokens = 64;
    c.kv_memory_bytes = 8 << 20;
    return c;
  }
  static std::vector<float> embed(std::vector<int32_t> tokens, Pooling pooling) {
    const Outcome o = run_alone(*model_, config(), {embedding(std::move(tokens), pooling)})[0];
    EXPECT_EQ(o.final.finish, FinishReason::Stop) << o.final.error;
    EXPECT_TRUE(o.tokens.empty());
    return o.final.embedding;
  }
  static Model* model_;
};

Model* EngineEmbeddings::model_ = nullptr;

// With the bundled model's tied output, logits = token_embd · state: the last
// token's pooled state must give the generation's greedy token and its
// log-probabilities.
TEST_F(EngineEmbeddings, LastPoolingIsTheStateTheLogitsComeFrom) {
  const auto p = prompt(30);
  const std::vector<float> state = embed(p, Pooling::Last);
  ASSERT_EQ(state.size(), size_t(model_->config().dim));
  Request gen = testing::greedy(p, 1);
  gen.top_logprobs = 5;
  const Outcome g = run_alone(*model_, config(), {gen})[0];
  ASSERT_EQ(g.tokens.size(), 1u);

  const ModelConfig& c = model_->config();
  ASSERT_EQ(model_->weights().output.type, DType::F32);
  const float* w = static_cast<const float*>(model_->weights().output.data);
  std::vector<double> logits(size_t(c.vocab_size));
  for (int32_t v = 0; v < c.vocab_size; ++v)
    for (int32_t d = 0; d < c.dim; ++d) logits[size_t(v)] += double(w[size_t(v) * size_t(c.dim) + size_t(d)]) * state[size_t(d)];
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (double l : logits) sum += std::exp(l - max);
  EXPECT_EQ(std::max_element(logits.begin(), logits.end()) - logits.begin(), g.tokens[0]);
  for (const TokenLogprob& t : g.events[0].top_logprobs)
    EXPECT_NEAR(logits[size_t(t.token)] - max - std::log(sum), t.logprob, 1e-3) << "token " << t.token;
}

// Attention is causal: the last state of each prefix is that position's
// state, so mean pooling is their average and CLS the first one's.
TEST_F(EngineEmbeddings, MeanAveragesThePositionsAndClsIsTheFirst) {
  const auto p = prompt(12, 3);
  std::vector<float> average(size_t(model_->config().dim));
  for (size_t n = 1; n <= p.size(); ++n) {
    const auto last = embed({p.begin(), p.begin() + ptrdiff_t(n)}, Pooling::Last);
    for (size_t d = 0; d < average.size(); ++d) average[d] += last[d] / float(p.size());
  }
  expect_near_vectors(embed(p, Pooling::Mean), average, 1e-4f);
  expect_near_vectors(embed(p, Pooling::Cls), embed({p[0]}, Pooling::Last), 1e-5f);
}

// Batched with each other and with generations, prompts split over steps
// (64 tokens a step), and after the prompt's blocks entered the prefix cache:
// the same vectors as alone.
TEST_F(EngineEmbeddings, BatchedChunkedAndAfterThePrefixCacheTheSame) {
  std::vector<Request> requests = {embedding(prompt(150, 1), Pooling::Mean), testing::greedy(prompt(150, 1), 20),
                                   embedding(prompt(40, 2), Pooling::Last), embedding(prompt(90, 3), Pooling::Cls),
                                   embedding(prompt(150, 1), Pooling::Mean)};
  const auto alone = run_alone(*model_, config(), requests);
  LlmEngine engine(*model_, config());
  run_together(engine, {testing::greedy(prompt(150, 1), 4)});  // its blocks are now cached
  const auto together = run_together(engine, requests);
  for (size_t i : {0u, 2u, 3u, 4u}) {
    EXPECT_EQ(together[i].final.prompt_tokens, int32_t(requests[i].prompt.size()));
    EXPECT_EQ(together[i].final.cached_tokens, 0) << "an embedding is never read from the prefix cache";
    expect_near_vectors(together[i].final.embedding, alone[i].final.embedding, 1e-5f);
  }
  EXPECT_EQ(together[1].tokens, alone[1].tokens);
  EXPECT_TRUE(together[1].final.embedding.empty());
}

TEST_F(EngineEmbeddings, ABoundedRetentionPolicyIsAnError) {
  Request r = embedding(prompt(10), Pooling::Mean);
  r.kv_retention = KvRetention{KvPolicy::Window, 8, 0, 0};  // window 8
  const Outcome o = run_alone(*model_, config(), {r})[0];
  EXPECT_EQ(o.final.finish, FinishReason::Error);
  EXPECT_NE(o.final.error.find("kv_retention"), std::string::npos);
}

}  // namespace
}  // namespace parley
