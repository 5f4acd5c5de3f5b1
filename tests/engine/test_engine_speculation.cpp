// Speculative decoding: drafts verified in the engine's batched step change
// no token (greedy and seeded sampling, mixed with plain decodes, across KV
// blocks, with stops and max_tokens inside a kept run, cancelled mid-run),
// sampled tokens follow the target's distribution, and rejected positions'
// blocks go back. Also the prompt-lookup drafter.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <thread>

#include "engine/grammar/grammar.h"
#include "engine/ngram_drafter.h"
#include "engine/sequence.h"
#include "engine_test_util.h"
#include "kernels/thread_pool.h"
#include "model/mkmodel.h"
#include "model/sequence_forward.h"

namespace parley {
namespace {

using testing::Outcome;

TEST(NgramDraft, LongestLatestMatchContinues) {
  const std::vector<int32_t> t{5, 1, 2, 3, 9, 8, 2, 3, 7, 4, 1, 2, 3};
  std::vector<int32_t> out{42};
  // "1 2 3" occurred at 1..3, followed by 9 8 2.
  EXPECT_EQ(ngram_draft(t, 3, out), 3);
  EXPECT_EQ(out, (std::vector<int32_t>{42, 9, 8, 2}));
  // Only "3" matches (latest at 7), followed by 7 4 1 2 3... within k.
  const std::vector<int32_t> u{3, 7, 4, 6, 3};
  out.clear();
  EXPECT_EQ(ngram_draft(u, 2, out), 2);
  EXPECT_EQ(out, (std::vector<int32_t>{7, 4}));
  out.clear();
  EXPECT_EQ(ngram_draft(std::vector<int32_t>{1, 2, 3}, 4, out), 0);
  EXPECT_TRUE(out.empty());
}

// Not adaptive: whether drafts pay depends on timing, and these tests want drafts.
EngineConfig config(SpecMode mode, int32_t k = 4, bool adaptive = false) {
  EngineConfig c;
  c.spec.adaptive = adaptive;
  c.threads = 1;
  c.max_batch_tokens = 64;
  c.kv_type = DType::F32;
  c.spec.mode = mode;
  c.spec.max_tokens = k;
  return c;
}

// Text that repeats itself, so that prompt lookup finds drafts.
std::vector<int32_t> repeating_prompt(const Model& model) {
  const std::string passage = "Once upon a time, there was a little girl named Lily. She loved to play outside.";
  return model.tokenizer().encode("Repeat: " + passage + " Again: " + passage + " Again:", true, false);
}

std::vector<Outcome> run(const Model& model, const EngineConfig& c, const std::vector<Request>& requests,
                         EngineStats* stats = nullptr) {
  LlmEngine engine(model, c);
  auto out = testing::run_together(engine, requests);
  if (stats) *stats = engine.stats();
  return out;
}

TEST(EngineSpeculation, NgramGreedySingleStreamIsUnchanged) {
  auto model = Model::load(testing::kBundled);
  const std::vector<Request> r{testing::greedy(repeating_prompt(*model), 80)};
  EngineStats st;
  const auto got = run(*model, config(SpecMode::Ngram), r, &st);
  expect_same_outcomes(got, run(*model, config(SpecMode::Off), r));
  EXPECT_GT(st.spec_accepted, 0u);
  EXPECT_LT(st.steps, 80u);  // kept drafts saved steps
  EXPECT_EQ(st.spec_tokens, st.spec_accepted + st.spec_verifications);
}

// A grammar's state advances with every kept draft: the rows after it are
// masked as plain decoding masks them.
TEST(EngineSpeculation, GrammarOutputIsUnchanged) {
  auto model = Model::load(testing::kBundled);
  const char* gbnf = R"(root ::= (("Tom " | "Lily ") ("ran" | "sat" | "saw a cat") (". " | " and ")){2,6} "The end.")";
  std::vector<Request> rs;
  for (int i = 0; i < 6; ++i) {
    Request r = testing::greedy(model->tokenizer().encode("Tom ran. Tom sat. Tom ran. Lily saw a cat.", true, false), 60);
    r.grammar = grammar::parse_gbnf(gbnf);
    if (i > 0) {
      r.sampling.temperature = 1.2f;
      r.sampling.seed = uint64_t(i);
    }
    rs.push_back(r);
  }
  EngineStats st;
  expect_same_outcomes(run(*model, config(SpecMode::Ngram, 4), rs, &st), run(*model, config(SpecMode::Off), rs));
  EXPECT_GT(st.spec_accepted, 0u);
}

// Greedy, seeded sampling with penalties, a grammar-free stop string, one
// request that asks for no speculation, log-probabilities: all together.
std::vector<Request> mixed(const Model& model) {
  const Tokenizer& tok = model.tokenizer();
  std::vector<Request> out;
  for (int i = 0; i < 8; ++i) {
    std::vector<int32_t> p = i % 2 ? repeating_prompt(model) : tok.encode("The cat sat and the cat sat", true, false);
    Request r = testing::greedy(p, 20 + 7 * i);
    if (i % 3 == 1) {
      r.sampling.temperature = 0.8f;
      r.sampling.top_p = 0.9f;
      r.sampling.repetition_penalty = 1.1f;
      r.sampling.seed = 77 + uint64_t(i);
    }
    if (i == 2) r.speculative = false;
    if (i == 4) r.stop_strings = {"Lily"};
    if (i == 5) r.top_logprobs = 2;
    out.push_back(r);
  }
  return out;
}

TEST(EngineSpeculation, BatchedMixedRequestsAreUnchanged) {
  auto model = Model::load(testing::kBundled);
  const auto requests = mixed(*model);
  EngineStats st;
  const auto got = run(*model, config(SpecMode::Ngram, 6), requests, &st);
  const auto want = run(*model, config(SpecMode::Off), requests);
  expect_same_outcomes(got, want);
  for (size_t i = 0; i < got.size(); ++i)
    for (size_t e = 0; e < got[i].events.size(); ++e) {
      EXPECT_EQ(got[i].events[e].logprob, want[i].events[e].logprob);
      EXPECT_EQ(got[i].events[e].top_logprobs.size(), want[i].events[e].top_logprobs.size());
    }
  EXPECT_GT(st.spec_accepted, 0u);
  EXPECT_EQ(st.kv_blocks_used, 0u);
}

// Generated models of other families (random weights repeat themselves, so
// prompt lookup drafts): a Llama with Q8_0 weights, Gemma 2 (soft-caps, a
// window), a mixture of experts. Speculation changes no token.
TEST(EngineSpeculation, GeneratedModelsAreUnchanged) {
  const std::string path = ::testing::TempDir() + "parley-spec-" + std::to_string(::getpid()) + ".gguf";
  for (const char* arch : {"llama", "gemma2", "qwen3moe"}) {
    SCOPED_TRACE(arch);
    MkModelSpec s;
    s.arch = arch;
    s.dim = 64;
    s.n_heads = 4;
    s.n_kv_heads = 2;
    s.ffn_dim = 128;
    s.sliding_window = 16;
    s.type = DType::Q8_0;
    s.vocab_from = testing::kBundled;
    write_random_model(s, path);
    auto model = Model::load(path);
    std::vector<Request> rs;
    for (int i = 0; i < 4; ++i) rs.push_back(testing::greedy(testing::prompt(12 + 9 * i, i), 40 + 5 * i));
    EngineStats st;
    expect_same_outcomes(run(*model, config(SpecMode::Ngram, 5), rs, &st), run(*model, config(SpecMode::Off), rs));
    EXPECT_GT(st.spec_accepted, 0u) << st.spec_drafted << " drafted";
    EXPECT_EQ(st.kv_blocks_used, 0u);
  }
  std::filesystem::remove(path);
}

// A pool of 12 blocks for 8 requests: speculation takes only blocks that are
// free, preempted sequences drop their drafts, and everything completes as
// without speculation. Under a bounded retention policy nothing is drafted.
TEST(EngineSpeculation, TinyPoolAndRetentionPolicies) {
  auto model = Model::load(testing::kBundled);
  auto requests = mixed(*model);
  for (auto& r : requests) r.max_tokens = 60;
  EngineConfig c = config(SpecMode::Ngram, 8);
  const uint64_t block = uint64_t(model->config().n_layers) * 2 * 16 * uint64_t(model->config().kv_dim()) * 4;
  c.kv_memory_bytes = 12 * block;
  EngineStats st;
  EngineConfig off = c;
  off.spec.mode = SpecMode::Off;
  expect_same_outcomes(run(*model, c, requests, &st), run(*model, off, requests));
  EXPECT_GT(st.preemptions, 0u);
  EXPECT_GT(st.spec_accepted, 0u);
  EXPECT_EQ(st.kv_blocks_used, 0u);

  for (auto& r : requests) r.kv_retention = KvRetention{KvPolicy::Window, 32, 4, 64};
  EngineStats window;
  expect_same_outcomes(run(*model, config(SpecMode::Ngram, 8), requests, &window), run(*model, config(SpecMode::Off), requests));
  EXPECT_EQ(window.spec_drafted, 0u);
}

std::vector<int32_t> greedy_tokens(const Model& model, const Request& r) {
  return run(model, config(SpecMode::Off), {r}).front().tokens;
}

// The oracle proposes the greedy output itself: every draft is kept, and
// runs of 8 cross blocks of 4 tokens every step.
TEST(EngineSpeculation, OracleKeepsEveryDraftAcrossBlocks) {
  auto model = Model::load(testing::kBundled);
  Request r = testing::greedy(model->tokenizer().encode("Once upon a time", true, false), 60);
  r.ignore_eos = true;
  EngineConfig c = config(SpecMode::Oracle, 8);
  c.block_size = 4;
  c.spec.oracle = greedy_tokens(*model, r);
  EngineStats st;
  EngineConfig off = c;
  off.spec.mode = SpecMode::Off;
  expect_same_outcomes(run(*model, c, {r}, &st), run(*model, off, {r}));
  EXPECT_EQ(st.spec_accepted, st.spec_drafted);
  EXPECT_LE(st.steps, 2u + 60u / 9u + 1u);
  EXPECT_EQ(st.kv_blocks_used, 0u);
}

// Adaptive: the drafts follow the acceptance estimate and the price of a
// position; the probes draft even when the fit has not seen a cheap one yet.
TEST(EngineSpeculation, AdaptiveDraftsWhatPays) {
  auto model = Model::load(testing::kBundled);
  Request r = testing::greedy(model->tokenizer().encode("Once upon a time", true, false), 60);
  r.ignore_eos = true;
  Sequence seq(1, r, {}, 0, model->tokenizer(), model->config().vocab_size, KvRetention{}, 60);
  SpecConfig sc;
  sc.mode = SpecMode::Oracle;
  sc.oracle = greedy_tokens(*model, r);
  seq.tokens.push_back(sc.oracle[0]);
  const Speculator spec(sc);
  EXPECT_EQ(spec.draft(seq, 0.6, 8), 0);  // 0.5 < 0.6: not one draft pays
  EXPECT_EQ(spec.draft(seq, 0.1, 8), 3);  // 0.5, 0.25, 0.125 > 0.1
  EXPECT_EQ(seq.spec.input, (std::vector<int32_t>{sc.oracle[0], sc.oracle[1], sc.oracle[2], sc.oracle[3]}));
  EXPECT_EQ(spec.draft(seq, 0.1, 2), 2);  // room
  Speculator::observe(seq, 3, 3);
  EXPECT_GT(seq.spec.acceptance, 0.5);
  Speculator::observe(seq, 3, 0);
  Speculator::observe(seq, 3, 0);
  EXPECT_LT(seq.spec.acceptance, 0.5);

  EngineConfig c = config(SpecMode::Oracle, 8, true);
  c.spec.oracle = sc.oracle;
  EngineStats st;
  expect_same_outcomes(run(*model, c, {r}, &st), run(*model, config(SpecMode::Off), {r}));
  EXPECT_GT(st.spec_accepted, 0u);
}

// Stop token, stop string and max_tokens inside a run of kept drafts end
// the request where plain decoding ends it.
TEST(EngineSpeculation, StopsInsideAKeptRun) {
  auto model = Model::load(testing::kBundled);
  Request base = testing::greedy(model->tokenizer().encode("Once upon a time", true, false), 40);
  base.ignore_eos = true;
  EngineConfig c = config(SpecMode::Oracle, 8);
  c.spec.oracle = greedy_tokens(*model, base);
  const auto& o = c.spec.oracle;
  std::vector<Request> rs(3, base);
  rs[0].stop_ids = {o[13]};
  const std::string text = run(*model, config(SpecMode::Off), {base}).front().text;
  rs[1].stop_strings = {text.substr(text.size() / 2, 3)};
  rs[2].max_tokens = 11;
  EngineStats st;
  const auto got = run(*model, c, rs, &st);
  expect_same_outcomes(got, run(*model, config(SpecMode::Off), rs));
  EXPECT_EQ(got[0].final.finish, FinishReason::Stop);
  EXPECT_FALSE(got[1].final.stop_string.empty());
  EXPECT_EQ(got[2].tokens.size(), 11u);
  EXPECT_GT(st.spec_accepted, 0u);
  EXPECT_EQ(st.kv_blocks_used, 0u);
}

TEST(EngineSpeculation, CancelMidSpeculationFreesEverything) {
  auto model = Model::load(testing::kBundled);
  Request r = testing::greedy(model->tokenizer().encode("Once upon a time", true, false), 200);
  r.ignore_eos = true;
  EngineConfig c = config(SpecMode::Oracle, 8);
  c.block_size = 4;
  c.spec.oracle = greedy_tokens(*model, r);
  LlmEngine engine(*model, c);
  const Outcome o = testing::cancel_at_event(engine, r, 20);  // inside a run of kept drafts
  EXPECT_EQ(o.final.finish, FinishReason::Cancelled);
  EXPECT_LT(o.tokens.size(), 200u);
  const EngineStats st = engine.stats();
  EXPECT_EQ(st.kv_blocks_used, 0u);
  EXPECT_GT(st.spec_accepted, 0u);
}

// Rejected drafts (prompt lookup on text that does not repeat as drafted)
// leave the pool as plain decoding leaves it: no block held, and the same
// prefix-cache contents (only committed tokens are hashed).
TEST(EngineSpeculation, RejectedPositionsGiveTheirBlocksBack) {
  auto model = Model::load(testing::kBundled);
  std::vector<Request> rs;
  for (int i = 0; i < 4; ++i) rs.push_back(testing::greedy(testing::prompt(40, i), 50));
  for (auto& r : rs) r.ignore_eos = true;
  EngineConfig c = config(SpecMode::Ngram, 8);
  c.block_size = 4;
  EngineConfig off = c;
  off.spec.mode = SpecMode::Off;
  EngineStats st, st_off;
  expect_same_outcomes(run(*model, c, rs, &st), run(*model, off, rs, &st_off));
  EXPECT_GT(st.spec_drafted, st.spec_accepted);  // some were rejected
  EXPECT_EQ(st.kv_blocks_used, 0u);
  EXPECT_EQ(st.kv_blocks_cached, st_off.kv_blocks_cached);
}

// Sampled verification follows the target: with temperature 1 and top-k 5,
// the second token, drafted as the first's runner-up, is distributed as the
// model's softmax says (chi-square, 4 degrees of freedom, p = 0.001).
TEST(EngineSpeculation, SampledTokensFollowTheTargetDistribution) {
  auto model = Model::load(testing::kBundled);
  const std::vector<int32_t> prompt = model->tokenizer().encode("Once upon a time", true, false);
  const int32_t vocab = model->config().vocab_size;
  ThreadPool pool(1);
  SequenceForward fwd(*model, pool);
  const float* l1 = fwd.eval(prompt.data(), int32_t(prompt.size()));
  const int32_t a = int32_t(std::max_element(l1, l1 + vocab) - l1);
  const float* l2 = fwd.eval(&a, 1);
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + 5, order.end(), [&](int32_t x, int32_t y) { return l2[x] > l2[y]; });
  std::vector<double> p(5);
  for (int i = 0; i < 5; ++i) p[size_t(i)] = std::exp(double(l2[order[size_t(i)]] - l2[order[0]]));
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& x : p) x /= total;

  EngineConfig c = config(SpecMode::Oracle, 1);
  c.max_running = 64;
  c.spec.oracle = {a, order[1], a};
  EngineStats st;
  // The third token of each is the one drawn after the draft.
  const auto got = run(*model, c, testing::seeded_samples(prompt, 3000, 1.0f, 5), &st);
  std::vector<double> counts = testing::second_token_bins(got, a, order, 5);
  ASSERT_EQ(counts[5], 0.0);  // top-k 5: nothing outside the 5
  counts.pop_back();
  const double n = std::accumulate(counts.begin(), counts.end(), 0.0);
  ASSERT_GT(n, 300);
  // Each of them verified its draft (a few more drafted their first token:
  // admitted with the whole prompt cached, they start as decodes).
  EXPECT_GE(double(st.spec_drafted), n);
  EXPECT_LT(testing::chi_square(counts, p), 18.47)
      << "counts " << counts[0] << " " << counts[1] << " " << counts[2] << " " << counts[3] << " " << counts[4];
  EXPECT_GT(st.spec_accepted, 0u);
  EXPECT_LT(st.spec_accepted, st.spec_drafted);
}

}  // namespace
}  // namespace parley
