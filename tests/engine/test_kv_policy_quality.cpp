// Perplexity of stories260K on a long real text (several times its context)
// under each KV retention policy and budget, every token evaluated in turn
// as in generation (Full restarts at each context-sized segment). Prints the
// table of docs/kv-policies.md and checks the orderings that hold robustly.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "engine/kv_retention.h"
#include "model/batch_forward.h"
#include "model/model.h"

namespace parley {
namespace {

struct PolicyRun {
  KvRetention kv;
  std::vector<int32_t> blocks;
  RetainedKv kept;
  double nll = 0;
  int32_t capacity() const { return kv.policy == KvPolicy::Full ? 0 : kept.capacity(); }
};

std::string label(const KvRetention& kv) {
  std::ostringstream s;
  s << kv_policy_name(kv.policy);
  if (kv.policy == KvPolicy::Sink || kv.policy == KvPolicy::HeavyHitter) s << " " << kv.sink << "+";
  if (kv.policy == KvPolicy::HeavyHitter) s << kv.heavy << "+";
  if (kv.policy != KvPolicy::Full) s << (kv.policy == KvPolicy::Window ? " " : "") << kv.window;
  return s.str();
}

TEST(KvPolicyQuality, PerplexityOnALongText) {
  auto model = Model::load(PARLEY_SOURCE_DIR "/models/stories260K.gguf");
  std::ifstream in(PARLEY_SOURCE_DIR "/tests/engine/data/long_story.txt");
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  auto tokens = model->tokenizer().encode(text, true, false);
  tokens.resize(std::min<size_t>(tokens.size(), 1000));
  const auto& c = model->config();
  // The full policy restarts at each segment of kContext tokens, a quarter of the model's 512, so
  // the text spans several segments.
  constexpr int32_t kContext = 128;
  ASSERT_GT(int32_t(tokens.size()), 5 * kContext);

  const KvRetention configs[] = {{KvPolicy::Full, 0, 0, 0},         {KvPolicy::Window, 128, 0, 0},
                                 {KvPolicy::Window, 64, 0, 0},
                                 {KvPolicy::Sink, 60, 4, 0},        {KvPolicy::HeavyHitter, 32, 4, 28},
                                 {KvPolicy::Window, 32, 0, 0},      {KvPolicy::Sink, 28, 4, 0},
                                 {KvPolicy::HeavyHitter, 16, 4, 12}};
  constexpr int32_t kBs = 16;
  std::vector<PolicyRun> runs;
  int32_t n_blocks = 0;
  for (const auto& kv : configs) {
    runs.push_back({kv, {}, RetainedKv(kv)});
    const int32_t slots = kv.policy == KvPolicy::Full ? kContext : runs.back().kept.capacity();
    for (int32_t b = 0; b * kBs < slots; ++b) runs.back().blocks.push_back(n_blocks++);
  }
  ThreadPool pool(1);
  KvCache cache(c, DType::F16, kBs, n_blocks);
  BatchForward fwd(*model, pool, cache, int32_t(runs.size()), int32_t(runs.size()), kContext);
  std::vector<BatchChunk> chunks(runs.size());
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    for (size_t r = 0; r < runs.size(); ++r) {
      PolicyRun& run = runs[r];
      BatchChunk& ch = chunks[r];
      ch = BatchChunk{&tokens[i], 1, int32_t(i % size_t(kContext)), run.blocks.data(), true};
      if (run.kv.policy == KvPolicy::Full) continue;  // restarts at each context-sized segment
      run.kept.place(1);
      ch.pos = run.kept.live() - 1;
      ch.slot_pos = run.kept.slot_pos();
      ch.slots = run.kept.slots();
      ch.n_slots = run.kept.n_slots();
      ch.attention_sums = run.kept.attention_sums();
    }
    const float* logits = fwd.step(chunks.data(), int32_t(chunks.size()));
    for (size_t r = 0; r < runs.size(); ++r) {
      const float* row = logits + r * size_t(c.vocab_size);
      const float max = *std::max_element(row, row + c.vocab_size);
      double sum = 0;
      for (int32_t v = 0; v < c.vocab_size; ++v) sum += std::exp(double(row[v] - max));
      runs[r].nll += std::log(sum) + double(max) - double(row[tokens[i + 1]]);
    }
  }
  const double per_token_bytes = double(KvCache::block_bytes(c, DType::F16, kBs)) / kBs;
  std::map<std::string, double> ppl;
  std::cout << "| policy | budget (tokens) | KV bytes / sequence (F16) | perplexity |\n|---|---|---|---|\n";
  for (const PolicyRun& run : runs) {
    const int32_t budget = run.kv.policy == KvPolicy::Full ? kContext : run.capacity();
    const double p = std::exp(run.nll / double(tokens.size() - 1));
    ppl[label(run.kv)] = p;
    std::cout << "| " << label(run.kv) << " | " << budget << " | " << budget * per_token_bytes << " | " << p
              << " |\n";
    EXPECT_TRUE(std::isfinite(p));
    EXPECT_LT(p, 40.0);  // the unigram entropy of this text is far higher
  }
  // Sliding beats restarting at each context; larger budgets help.
  EXPECT_LT(ppl["window 128"], ppl["full"]);
  EXPECT_LT(ppl["window 64"], ppl["window 32"]);
  EXPECT_LT(ppl["sink 4+60"], ppl["sink 4+28"]);
  EXPECT_LT(ppl["heavy-hitter 4+28+32"], ppl["heavy-hitter 4+12+16"]);
}

}  // namespace
}  // namespace parley
