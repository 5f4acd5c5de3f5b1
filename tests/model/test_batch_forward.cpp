// BatchForward (several sequences per step over a paged K/V cache) against
// one sequence at a time (SequenceForward), and stories260K's greedy golden outputs.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "model/batch_forward.h"
#include "model/sequence_forward.h"
#include "model/mkmodel.h"
#include "util/error.h"
#include "model_test_util.h"

namespace parley {
namespace {

using testing::kShared;
using testing::kBundled;
using testing::max_relative_error;
using testing::temp_path;

constexpr int32_t kBlock = 16;

// One sequence of a batched run: its tokens, a block table handed out from
// the end of the pool (so tables are not the identity), and, in retention
// mode, slot positions (identity here: nothing is evicted).
struct TestSeq {
  std::vector<int32_t> tokens, blocks, slot_pos;
  int32_t done = 0;
};

std::vector<int32_t> synthetic(int32_t n, int32_t salt, int32_t vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  t[0] = 1;
  for (int32_t i = 1; i < n; ++i) t[size_t(i)] = (i * 37 + salt * 101 + 11) % vocab;
  return t;
}

// Runs the sequences together, each taking a chunk of a varying size per
// step, and returns per sequence the logits after each chunk's last token,
// keyed by that token's position.
std::vector<std::vector<std::pair<int32_t, std::vector<float>>>> run_batched(
    const Model& model, DType kv_type, std::vector<TestSeq> seqs, bool retention) {
  const auto& c = model.config();
  ThreadPool pool(2);
  int32_t n_blocks = 0;
  for (auto& s : seqs) n_blocks += (int32_t(s.tokens.size()) + kBlock - 1) / kBlock;
  KvCache cache(c, kv_type, kBlock, n_blocks);
  int32_t next = n_blocks;
  for (auto& s : seqs) {
    for (size_t b = 0; b * kBlock < s.tokens.size(); ++b) s.blocks.push_back(--next);
    s.slot_pos.assign(s.blocks.size() * kBlock, -1);
  }
  BatchForward fwd(model, pool, cache, 64, int32_t(seqs.size()), c.context_length);
  std::vector<std::vector<std::pair<int32_t, std::vector<float>>>> out(seqs.size());
  std::vector<int32_t> slots(64);
  std::iota(slots.begin(), slots.end(), 0);
  const int32_t sizes[] = {7, 1, 13, 1, 1, 5};
  for (int32_t step = 0;; ++step) {
    std::vector<BatchChunk> chunks;
    std::vector<size_t> owner;
    for (size_t i = 0; i < seqs.size(); ++i) {
      TestSeq& s = seqs[i];
      const int32_t left = int32_t(s.tokens.size()) - s.done;
      if (left == 0) continue;
      BatchChunk ch;
      ch.n = std::min(left, sizes[(step + int32_t(i)) % 6]);
      ch.tokens = s.tokens.data() + s.done;
      ch.pos = s.done;
      ch.blocks = s.blocks.data();
      ch.logits = true;
      if (retention) {
        for (int32_t j = 0; j < ch.n; ++j) s.slot_pos[size_t(s.done + j)] = s.done + j;
        ch.slot_pos = s.slot_pos.data();
        ch.slots = slots.data() + s.done;
        ch.n_slots = s.done + ch.n;
      }
      s.done += ch.n;
      chunks.push_back(ch);
      owner.push_back(i);
    }
    if (chunks.empty()) break;
    const float* logits = fwd.step(chunks.data(), int32_t(chunks.size()));
    for (size_t k = 0; k < chunks.size(); ++k) {
      const float* row = logits + k * size_t(c.vocab_size);
      out[owner[k]].push_back({chunks[k].pos + chunks[k].n - 1, std::vector<float>(row, row + c.vocab_size)});
    }
  }
  return out;
}

void expect_matches_forward(const Model& model, DType kv_type, bool retention, double tolerance) {
  const int32_t vocab = model.config().vocab_size;
  std::vector<TestSeq> seqs;
  for (int32_t n : {5, 23, 40, 1, 17}) seqs.push_back({synthetic(n, n, vocab), {}, {}, 0});
  const auto got = run_batched(model, kv_type, seqs, retention);
  ThreadPool pool(1);
  for (size_t i = 0; i < seqs.size(); ++i) {
    const auto& tokens = seqs[i].tokens;
    SequenceForward fwd(model, pool);
    std::vector<float> want(tokens.size() * size_t(vocab));
    fwd.eval(tokens.data(), int32_t(tokens.size()), want.data());
    ASSERT_FALSE(got[i].empty());
    for (const auto& [pos, logits] : got[i])
      ASSERT_LT(max_relative_error(logits.data(), want.data() + size_t(pos) * size_t(vocab), vocab), tolerance)
          << "sequence " << i << " position " << pos;
  }
}

TEST(BatchForward, MatchesForwardOnStories260K) {
  auto model = Model::load(kBundled);
  expect_matches_forward(*model, DType::F32, false, 1e-5);
  expect_matches_forward(*model, DType::F16, false, 5e-3);
}

TEST(BatchForward, KeysRotatedAtReadMatchStoredRotated) {
  auto model = Model::load(kBundled);
  expect_matches_forward(*model, DType::F32, true, 1e-5);
}

MkModelSpec spec(const char* arch, int32_t n_kv_heads, int32_t head_dim) {
  MkModelSpec s;
  s.arch = arch;
  s.dim = 128;
  s.n_layers = 2;
  s.n_heads = 4;
  s.n_kv_heads = n_kv_heads;
  s.head_dim = head_dim;
  s.ffn_dim = 96;
  s.context_length = 128;
  s.vocab_from = kBundled;
  s.seed = 3;
  return s;
}

TEST(BatchForward, MatchesForwardOnEveryArchitecture) {
  auto mistral = spec("mistral", 2, 0);
  mistral.sliding_window = 8;  // crossed by the longer sequences
  auto gemma2 = spec("gemma2", 2, 64);
  gemma2.sliding_window = 8;
  gemma2.attn_softcap = 1.0f;
  gemma2.final_softcap = 2.0f;
  auto gemma3 = spec("gemma3", 2, 64);
  gemma3.sliding_window = 8;
  gemma3.n_layers = 6;  // five local layers (their own rope base) and a global one
  auto phi3 = spec("phi3", 2, 64);
  phi3.original_context = 64;  // LongRoPE's long factors and attention factor
  auto yarn = spec("qwen2", 2, 0);
  yarn.yarn_factor = 4.0f;
  yarn.original_context = 32;
  const std::pair<const char*, MkModelSpec> cases[] = {
      {"llama3", spec("llama3", 2, 0)}, {"mistral", mistral}, {"qwen2", spec("qwen2", 2, 0)},
      {"qwen3", spec("qwen3", 2, 64)}, {"gemma2", gemma2}, {"gemma3", gemma3}, {"phi3", phi3}, {"qwen2_yarn", yarn}};
  for (const auto& [name, s] : cases) {
    SCOPED_TRACE(name);
    const std::string path = temp_path(std::string(name) + ".gguf");
    write_random_model(s, path);
    auto model = Model::load(path);
    expect_matches_forward(*model, DType::F32, false, 1e-4);
    if (s.head_dim == 64) expect_matches_forward(*model, DType::Q8_0, false, 5e-2);
    // Keys rotated at read: each layer's rope (local or global) for its keys.
    if (s.arch == "gemma3" || s.arch == "phi3" || s.yarn_factor > 0.0f)
      expect_matches_forward(*model, DType::F32, true, 1e-4);
    std::filesystem::remove(path);
  }
}

// Mixture-of-experts: a step's tokens (prefill pieces and decode tokens of
// sequences of mixed lengths) go to mixed experts, grouped per expert; each
// sequence's logits must be those of running it alone. Every KV type.
TEST(BatchForward, MixtureOfExpertsMatchesForward) {
  auto moe = [](const char* arch, int32_t experts, int32_t used) {
    auto s = spec(arch, 2, 64);
    s.n_experts = experts;
    s.n_experts_used = used;
    s.ffn_dim = 64;
    return s;
  };
  auto qwen2moe = moe("qwen2moe", 6, 2);
  qwen2moe.shared_expert_ffn = 96;
  auto olmoe = moe("olmoe", 8, 2);
  olmoe.n_kv_heads = 4;
  const std::pair<const char*, MkModelSpec> cases[] = {
      {"qwen3moe", moe("qwen3moe", 8, 3)}, {"mixtral", moe("mixtral", 4, 2)}, {"qwen2moe", qwen2moe}, {"olmoe", olmoe}};
  for (const auto& [name, s] : cases) {
    SCOPED_TRACE(name);
    const std::string path = temp_path(std::string(name) + ".gguf");
    write_random_model(s, path);
    auto model = Model::load(path);
    expect_matches_forward(*model, DType::F32, false, 1e-4);
    expect_matches_forward(*model, DType::F32, true, 1e-4);
    std::filesystem::remove(path);
  }
  // The other KV types against the F32 single-sequence pass: every expert
  // used, as their rounding may tip a near-tie in the choice of k experts.
  auto all = moe("qwen3moe", 4, 4);
  const std::string path = temp_path("qwen3moe-all.gguf");
  write_random_model(all, path);
  auto model = Model::load(path);
  expect_matches_forward(*model, DType::F16, false, 5e-3);
  expect_matches_forward(*model, DType::Q8_0, false, 5e-2);
  std::filesystem::remove(path);
}

// Of the whole pages inside [from, to): how many are resident (mincore), and
// how many there are.
std::pair<int64_t, int64_t> resident_pages(const uint8_t* from, const uint8_t* to) {
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (uintptr_t(from) + page - 1) / page * page, end = uintptr_t(to) / page * page;
  std::vector<unsigned char> vec((end - begin) / page);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(begin), end - begin, vec.data()), 0);
  return {std::count_if(vec.begin(), vec.end(), [](unsigned char c) { return c & 1; }), int64_t(vec.size())};
}

// A committed block's pages are resident (mincore) before anything is written
// to them; the other blocks' pages are not.
TEST(KvCachePool, CommitBlockMakesItsPagesResident) {
  auto model = Model::load(kBundled);
  KvCache cache(model->config(), DType::F32, 64, 64);
  const PagedKv kv = cache.layer(0, nullptr);
  const size_t page = size_t(sysconf(_SC_PAGESIZE)), bytes = kv.block_stride;
  ASSERT_GE(bytes, 4 * page) << "the test needs blocks of several pages";
  // Whole pages inside the block (its edge pages may be shared).
  const auto resident = [&](int32_t block) {
    return resident_pages(kv.k + size_t(block) * bytes, kv.k + size_t(block + 1) * bytes).first;
  };
  const int64_t pages = int64_t(bytes / page) - 1;
  EXPECT_EQ(resident(5), 0);
  EXPECT_FALSE(cache.committed(5));
  cache.commit_block(5);
  EXPECT_TRUE(cache.committed(5));
  EXPECT_GE(resident(5), pages);
  EXPECT_EQ(resident(60), 0);  // over 2 MiB away: not even a huge page reaches it
  cache.commit_block(5);  // again: nothing to do
  EXPECT_GE(resident(5), pages);
}

// A pool committed at construction: every block resident, zeroed, and
// commit_block has nothing left to do.
TEST(KvCachePool, CommitNowMakesEveryBlockResident) {
  auto model = Model::load(kBundled);
  KvCache cache(model->config(), DType::F32, 64, 64, KvCache::Commit::Now);
  const PagedKv kv = cache.layer(0, nullptr);
  const auto [resident, pages] = resident_pages(kv.k, kv.k + cache.bytes());
  ASSERT_GT(pages, 0);
  EXPECT_EQ(resident, pages);
  for (int32_t b : {0, 5, 63}) {
    EXPECT_TRUE(cache.committed(b));
    const float* row = reinterpret_cast<const float*>(cache.k_row(b, 0, 3, 0));
    EXPECT_TRUE(std::all_of(row, row + model->config().head_dim, [](float x) { return x == 0.0f; }));
  }
}

TEST(BatchForward, RefusesQ8_0KvWhenHeadsAreNotBlocks) {
  auto model = Model::load(kBundled);  // head_dim 8
  EXPECT_THROW(KvCache(model->config(), DType::Q8_0, kBlock, 4), Error);
  EXPECT_THROW(KvCache(model->config(), DType::Q4_0, kBlock, 4), Error);
}

// Every golden prompt generated together, one batch per step, reproduces
// run.c's greedy tokens.
TEST(BatchForward, GreedyGoldenBatched) {
  const std::string golden = kShared + "/golden/stories260K-greedy.jsonl";
  if (!std::filesystem::exists(golden)) GTEST_SKIP() << "../shared/golden not present";
  auto model = Model::load(kBundled);
  const int32_t vocab = model->config().vocab_size;
  struct Case {
    std::vector<int32_t> tokens, want, blocks;
    int32_t total, done = 0;
    size_t prompt = tokens.size();
  };
  std::vector<Case> cases;
  std::ifstream in(golden);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) {
      const auto j = nlohmann::json::parse(line);
      cases.push_back({j["prompt_ids"], j["generated_ids"], {}, j["total_positions"]});
    }
  ASSERT_FALSE(cases.empty());
  ThreadPool pool(2);
  const int32_t per_seq = (cases[0].total + kBlock - 1) / kBlock;
  KvCache cache(model->config(), DType::F32, kBlock, per_seq * int32_t(cases.size()));
  for (size_t i = 0; i < cases.size(); ++i)
    for (int32_t b = 0; b < per_seq; ++b) cases[i].blocks.push_back(int32_t(i) + b * int32_t(cases.size()));
  BatchForward fwd(*model, pool, cache, 256, int32_t(cases.size()), cases[0].total);
  for (;;) {
    std::vector<BatchChunk> chunks;
    std::vector<Case*> owner;
    for (auto& c : cases) {
      if (c.tokens.size() >= c.prompt + c.want.size()) continue;
      const int32_t n = int32_t(c.tokens.size()) - c.done;
      chunks.push_back({c.tokens.data() + c.done, n, c.done, c.blocks.data(), true});
      c.done += n;
      owner.push_back(&c);
    }
    if (chunks.empty()) break;
    const float* logits = fwd.step(chunks.data(), int32_t(chunks.size()));
    for (size_t k = 0; k < chunks.size(); ++k) {
      const float* row = logits + k * size_t(vocab);
      owner[k]->tokens.push_back(int32_t(std::max_element(row, row + vocab) - row));
    }
  }
  for (const auto& c : cases)
    EXPECT_EQ(std::vector<int32_t>(c.tokens.begin() + std::ptrdiff_t(c.prompt), c.tokens.end()), c.want);
}

}  // namespace
}  // namespace parley
