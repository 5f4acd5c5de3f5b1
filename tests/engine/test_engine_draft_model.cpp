// Speculative decoding with a draft model (SpecMode::Draft): greedy output
// is that of plain decoding token for token, whatever the draft's weights
// (the target itself, a differently seeded model), batched with plain
// decodes and prefill chunks, across KV blocks, under preemption, with a
// grammar, with stops and max_tokens inside a kept run, cancelled mid-run;
// both KV pools end as they started; seeded sampling is reproducible and
// follows the target's distribution whatever the draft's; a draft of
// another vocabulary is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <thread>

#include "engine/draft_draw.h"
#include "engine/draft_model_drafter.h"
#include "engine/grammar/grammar.h"
#include "engine/sequence.h"
#include "engine_test_util.h"
#include "kernels/thread_pool.h"
#include "model/mkmodel.h"
#include "model/model_files.h"
#include "model/sequence_forward.h"
#include "util/error.h"

namespace parley {
namespace {

using testing::Outcome;

// Not adaptive: whether drafts pay depends on timing, and these tests want drafts.
EngineConfig config(std::shared_ptr<const Model> draft, int32_t k = 4) {
  EngineConfig c;
  c.threads = 1;
  c.max_batch_tokens = 64;
  c.kv_type = DType::F32;
  c.spec.adaptive = false;
  c.spec.max_tokens = k;
  c.spec.mode = draft ? SpecMode::Draft : SpecMode::Off;
  c.spec.draft = std::move(draft);
  return c;
}

std::vector<Outcome> run(const Model& model, const EngineConfig& c, const std::vector<Request>& requests,
                         EngineStats* stats = nullptr) {
  LlmEngine engine(model, c);
  auto out = testing::run_together(engine, requests);
  if (stats) *stats = engine.stats();
  return out;
}

void expect_pools_empty(const EngineStats& st) {
  EXPECT_EQ(st.kv_blocks_used, 0u);
  EXPECT_GT(st.draft_kv_blocks_total, 0u);
  EXPECT_EQ(st.draft_kv_blocks_used, 0u);
}

std::string temp_model(const char* name) {
  return ::testing::TempDir() + "parley-draft-" + name + "-" + std::to_string(::getpid()) + ".gguf";
}

// A small Llama of the bundled vocabulary; `seed` picks its weights.
std::shared_ptr<const Model> generated(const char* name, uint64_t seed, DType type = DType::F32, int32_t layers = 2) {
  MkModelSpec s;
  s.dim = 64;
  s.n_layers = layers;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.ffn_dim = 128;
  s.type = type;
  s.seed = seed;
  s.vocab_from = testing::kBundled;
  const std::string path = temp_model(name);
  write_random_model(s, path);
  std::shared_ptr<const Model> m = Model::load(path);
  std::filesystem::remove(path);
  return m;
}

// The bundled model drafting for itself: its drafts are its own greedy
// choices, so nearly all are kept, and nothing changes.
TEST(EngineDraftModel, SelfDraftKeepsNearlyEverything) {
  std::shared_ptr<const Model> model = Model::load(testing::kBundled);
  Request r = testing::greedy(model->tokenizer().encode("Once upon a time", true, false), 80);
  r.ignore_eos = true;
  EngineStats st;
  const auto got = run(*model, config(model, 4), {r}, &st);
  expect_same_outcomes(got, run(*model, config(nullptr), {r}));
  EXPECT_GT(double(st.spec_accepted), 0.9 * double(st.spec_drafted)) << st.spec_accepted << " of " << st.spec_drafted;
  EXPECT_LT(st.steps, 30u);  // 80 tokens at up to 5 a step
  EXPECT_GT(st.spec_draft_us, 0u);
  expect_pools_empty(st);
}

// Greedy, seeded sampling with penalties, a stop string, a request that
// asks for no speculation, log-probabilities, long prompts in chunks: all
// together, with a draft of other weights, in blocks of 4 tokens.
std::vector<Request> mixed(const Model& model) {
  const Tokenizer& tok = model.tokenizer();
  std::vector<Request> out;
  for (int i = 0; i < 8; ++i) {
    std::vector<int32_t> p = i % 2 ? testing::prompt(90 + i, i) : tok.encode("The cat sat and the cat sat", true, false);
    Request r = testing::greedy(p, 20 + 7 * i);
    if (i == 2) r.speculative = false;
    if (i == 4) r.stop_strings = {"the"};
    if (i == 5) r.top_logprobs = 2;
    if (i == 6) r.sampling.repetition_penalty = 1.3f;
    out.push_back(r);
  }
  return out;
}

TEST(EngineDraftModel, OtherWeightsChangeNoGreedyToken) {
  auto target = generated("target", 1);
  auto draft = generated("draft", 7, DType::Q8_0, 1);
  const auto requests = mixed(*target);
  EngineConfig c = config(draft, 5);
  c.block_size = 4;
  EngineConfig off = config(nullptr);
  off.block_size = 4;
  EngineStats st;
  const auto got = run(*target, c, requests, &st);
  const auto want = run(*target, off, requests);
  expect_same_outcomes(got, want);
  for (size_t i = 0; i < got.size(); ++i)
    for (size_t e = 0; e < got[i].events.size(); ++e) EXPECT_EQ(got[i].events[e].logprob, want[i].events[e].logprob);
  EXPECT_GT(st.spec_drafted, 0u);
  expect_pools_empty(st);
}

// The same weights quantized: most drafts kept, the output unchanged; sampled
// requests with a seed give plain decoding's tokens, drafts kept too.
TEST(EngineDraftModel, QuantizedSelfDraftAndSeededSampling) {
  auto target = generated("target", 3);
  auto draft = generated("draft", 3, DType::Q8_0);
  std::vector<Request> rs;
  for (int i = 0; i < 4; ++i) rs.push_back(testing::greedy(testing::prompt(10 + 13 * i, i), 48));
  EngineStats st;
  expect_same_outcomes(run(*target, config(draft, 6), rs, &st), run(*target, config(nullptr), rs));
  // Random weights give nearly flat distributions, where Q8_0's rounding moves
  // the boundaries of the inverse distribution function most: fewer kept.
  EXPECT_GT(double(st.spec_accepted), 0.25 * double(st.spec_drafted)) << st.spec_accepted << " of " << st.spec_drafted;
  expect_pools_empty(st);

  for (auto& r : rs) {
    r.sampling.temperature = 0.9f;
    r.sampling.top_p = 0.95f;
    r.sampling.seed = 11;
  }
  expect_same_outcomes(run(*target, config(draft, 6), rs, &st), run(*target, config(nullptr), rs));
  // Random weights give nearly flat distributions, where Q8_0's rounding moves
  // the boundaries of the inverse distribution function most: fewer kept.
  EXPECT_GT(double(st.spec_accepted), 0.25 * double(st.spec_drafted)) << st.spec_accepted << " of " << st.spec_drafted;
  expect_pools_empty(st);
}

// A pool of 12 blocks for 8 requests: preempted sequences drop their
// drafts (the draft's K/V of their tokens stays valid), and everything
// completes as without speculation.
TEST(EngineDraftModel, TinyPoolPreemptsAndCompletes) {
  std::shared_ptr<const Model> model = Model::load(testing::kBundled);
  auto requests = mixed(*model);
  for (auto& r : requests) r.max_tokens = 60;
  EngineConfig c = config(model, 8);
  EngineConfig off = config(nullptr);
  const uint64_t block = uint64_t(model->config().n_layers) * 2 * 16 * uint64_t(model->config().kv_dim()) * 4;
  c.kv_memory_bytes = 2 * 12 * block;  // 12 blocks in each pool
  off.kv_memory_bytes = 12 * block;
  EngineStats st;
  expect_same_outcomes(run(*model, c, requests, &st), run(*model, off, requests));
  EXPECT_EQ(st.kv_blocks_total, 12u);
  EXPECT_GT(st.preemptions, 0u);
  EXPECT_GT(st.spec_accepted, 0u);
  expect_pools_empty(st);
}

// A grammar's state advances in the drafts as in the verification: greedy
// requests held to a grammar give plain decoding's answer, sampled ones
// a match of the grammar.
TEST(EngineDraftModel, GrammarRequests) {
  std::shared_ptr<const Model> model = Model::load(testing::kBundled);
  auto draft = generated("draft", 4);
  const char* gbnf = R"(root ::= (("Tom " | "Lily ") ("ran" | "sat" | "saw a cat") (". " | " and ")){2,6} "The end.")";
  std::vector<Request> rs;
  for (int i = 0; i < 4; ++i) {
    Request r = testing::greedy(model->tokenizer().encode("Tom ran. Tom sat. Lily saw a cat.", true, false), 60);
    r.grammar = grammar::parse_gbnf(gbnf);
    rs.push_back(r);
  }
  for (auto d : {std::shared_ptr<const Model>(model), draft}) {
    EngineStats st;
    expect_same_outcomes(run(*model, config(d, 4), rs, &st), run(*model, config(nullptr), rs));
    EXPECT_GT(st.spec_drafted, 0u);
    expect_pools_empty(st);
  }
  for (int i = 0; i < 4; ++i) {
    rs[size_t(i)].sampling.temperature = 1.0f;
    rs[size_t(i)].sampling.seed = uint64_t(i);
  }
  EngineStats st;
  for (const Outcome& o : run(*model, config(model, 4), rs, &st)) {
    EXPECT_EQ(o.final.finish, FinishReason::Stop);
    EXPECT_TRUE(o.text.ends_with("The end.")) << o.text;
  }
  EXPECT_GT(st.spec_accepted, 0u);
  expect_pools_empty(st);
}

// Stop token, stop string and max_tokens inside a run of kept drafts end
// the request where plain decoding ends it.
TEST(EngineDraftModel, StopsInsideAKeptRun) {
  std::shared_ptr<const Model> model = Model::load(testing::kBundled);
  Request base = testing::greedy(model->tokenizer().encode("Once upon a time", true, false), 40);
  base.ignore_eos = true;
  const Outcome plain = run(*model, config(nullptr), {base}).front();
  std::vector<Request> rs(3, base);
  rs[0].stop_ids = {plain.tokens[13]};
  rs[1].stop_strings = {plain.text.substr(plain.text.size() / 2, 3)};
  rs[2].max_tokens = 11;
  EngineConfig c = config(model, 8);
  c.block_size = 4;
  EngineStats st;
  const auto got = run(*model, c, rs, &st);
  expect_same_outcomes(got, run(*model, config(nullptr), rs));
  EXPECT_EQ(got[0].final.finish, FinishReason::Stop);
  EXPECT_FALSE(got[1].final.stop_string.empty());
  EXPECT_EQ(got[2].tokens.size(), 11u);
  EXPECT_GT(st.spec_accepted, 0u);
  expect_pools_empty(st);
}

TEST(EngineDraftModel, CancelMidSpeculationFreesBothPools) {
  std::shared_ptr<const Model> model = Model::load(testing::kBundled);
  Request r = testing::greedy(model->tokenizer().encode("Once upon a time", true, false), 200);
  r.ignore_eos = true;
  EngineConfig c = config(model, 8);
  c.block_size = 4;
  LlmEngine engine(*model, c);
  const Outcome o = testing::cancel_at_event(engine, r, 20);  // inside a run of kept drafts
  EXPECT_EQ(o.final.finish, FinishReason::Cancelled);
  EXPECT_LT(o.tokens.size(), 200u);
  const EngineStats st = engine.stats();
  EXPECT_GT(st.spec_accepted, 0u);
  expect_pools_empty(st);
}

TEST(EngineDraftModel, OtherVocabularyIsRefused) {
  std::shared_ptr<const Model> model = Model::load(testing::kBundled);
  MkModelSpec s;
  s.vocab_from = testing::kBundled;
  s.vocab_size = 600;  // padded: another vocabulary's size
  const std::string path = temp_model("vocab");
  write_random_model(s, path);
  std::shared_ptr<const Model> other = Model::load(path);
  std::filesystem::remove(path);
  try {
    LlmEngine engine(*model, config(other));
    FAIL() << "a draft of another vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--draft-model: its vocabulary has 600 tokens"), std::string::npos) << e.what();
  }
}

// When the draft model may catch up with a sequence it has not followed:
// only where the catch-up (lag x the price of a token) costs less than the
// drafting it enables saves over the tokens left; always when it is in step
// (and probes only then); never while a step's price is unknown.
TEST(EngineDraftModel, CatchUpOnlyWherePays) {
  std::shared_ptr<const Model> model = Model::load(testing::kBundled);
  Request r = testing::greedy(testing::prompt(100), 200);
  Sequence seq(1, r, {}, 0, model->tokenizer(), model->config().vocab_size, KvRetention{}, 200);
  SpecConfig sc;
  sc.mode = SpecMode::Draft;
  sc.draft = model;
  Speculator spec(sc);
  spec.set_draft_cost(nullptr, 0.1);
  // 200 tokens left, 20 ms a token's share, (0.5 - 0.1) / 1.5 of it saved: about 1 s
  // against 100 tokens at 1 ms x 0.1.
  EXPECT_TRUE(spec.catch_up_pays(seq, 0.1, 0.001, 0.020));
  EXPECT_FALSE(spec.catch_up_pays(seq, 0.1, 0.2, 0.020));   // a costly catch-up: 2 s
  EXPECT_FALSE(spec.catch_up_pays(seq, 0.6, 0.001, 0.020));  // drafting saves nothing at theta 0.6
  EXPECT_FALSE(spec.catch_up_pays(seq, 0.0, 0.0, 0.0));      // the step's price is not known
  EXPECT_FALSE(spec.probes(seq));
  seq.spec.draft = std::make_unique<DraftState>();
  seq.spec.draft->computed = 99;  // in step: the last token only
  EXPECT_TRUE(spec.catch_up_pays(seq, 0.6, 0.2, 0.0));
  EXPECT_TRUE(spec.probes(seq));
  seq.spec.draft->computed = 0;
  sc.adaptive = false;
  EXPECT_TRUE(Speculator(sc).catch_up_pays(seq, 0.9, 1.0, 0.0));  // fixed drafting always drafts
}

// A draft drawn from the target's own distribution with the uniform the
// target's sampler takes next is the token the sampler draws: the coupling
// that keeps a close draft's tokens.
TEST(DraftDraw, SameDistributionSameUniformSameToken) {
  constexpr int32_t kVocab = 300;
  std::mt19937 values(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (const float top_p : {1.0f, 0.9f}) {
    SamplingParams sp;
    sp.temperature = 0.8f;
    sp.top_p = top_p;
    sp.seed = 17;
    Sampler target(sp, kVocab);
    for (int i = 0; i < 200; ++i) {
      std::vector<float> logits(kVocab), q(kVocab);
      for (float& l : logits) l = normal(values);
      std::vector<float> copy = logits;
      Sampler draft = target;
      draft.probabilities(copy.data(), q.data());
      std::mt19937_64 rng = target.rng();
      const int32_t x = draw_index(q.data(), kVocab, uniform01(rng));
      ASSERT_EQ(target.sample(logits.data()), x) << "draw " << i << " top_p " << top_p;
    }
  }
}

// The bundled model with its matrices in Q4_0.
std::shared_ptr<const Model> bundled_q4_0() {
  const std::string path = temp_model("q4_0");
  quantize_gguf(testing::kBundled, path, *quant_recipe_from_name("q4_0"));
  std::shared_ptr<const Model> m = Model::load(path);
  std::filesystem::remove(path);
  return m;
}

// Sampled drafts from draft models whose distributions differ from the
// target's (the same weights in Q4_0: close; random weights: far), through
// the engine: the second token, drafted and verified, is
// distributed as the target's softmax says (chi-square over its 4 likeliest
// tokens and the rest, 4 degrees of freedom, p = 0.001).
TEST(EngineDraftModel, SampledTokensFollowTheTargetDistribution) {
  std::shared_ptr<const Model> target = Model::load(testing::kBundled);
  const std::vector<int32_t> prompt = target->tokenizer().encode("Once upon a time", true, false);
  const int32_t vocab = target->config().vocab_size;
  constexpr float kTemperature = 1.5f;
  ThreadPool pool(1);
  SequenceForward fwd(*target, pool);
  const float* l1 = fwd.eval(prompt.data(), int32_t(prompt.size()));
  const int32_t a = int32_t(std::max_element(l1, l1 + vocab) - l1);
  const float* l2 = fwd.eval(&a, 1);
  std::vector<double> p(static_cast<size_t>(vocab));
  const float top = *std::max_element(l2, l2 + vocab);
  for (int32_t i = 0; i < vocab; ++i) p[size_t(i)] = std::exp(double(l2[i] - top) / kTemperature);
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& x : p) x /= total;
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + 4, order.end(), [&](int32_t x, int32_t y) { return p[size_t(x)] > p[size_t(y)]; });
  std::vector<double> bins(5, 0.0);
  for (int i = 0; i < 4; ++i) bins[size_t(i)] = p[size_t(order[size_t(i)])];
  bins[4] = 1.0 - bins[0] - bins[1] - bins[2] - bins[3];

  for (auto draft : {bundled_q4_0(), generated("other", 9)}) {
    EngineConfig c = config(draft, 1);
    c.max_running = 64;
    c.max_batch_tokens = 512;
    EngineStats st;
    const auto got = run(*target, c, testing::seeded_samples(prompt, 3000, kTemperature), &st);
    const std::vector<double> counts = testing::second_token_bins(got, a, order, 4);
    const double n = std::accumulate(counts.begin(), counts.end(), 0.0);
    ASSERT_GT(n, 300);
    EXPECT_GE(double(st.spec_drafted), n);
    EXPECT_LT(testing::chi_square(counts, bins), 18.47) << "counts " << counts[0] << " " << counts[1] << " " << counts[2] << " " << counts[3]
                           << " " << counts[4] << " of " << n;
    EXPECT_GT(st.spec_accepted, 0u);
    EXPECT_LT(st.spec_accepted, st.spec_drafted);
    expect_pools_empty(st);
    // Drawn with the target's uniforms, a close draft lands on the target's
    // token most times; drawn independently it would match about sum(p q),
    // 0.62 here.
    if (draft->path().find("q4_0") != std::string::npos) {
      EXPECT_GT(double(st.spec_accepted), 0.85 * double(st.spec_drafted)) << st.spec_accepted << " of " << st.spec_drafted;
    }
  }
}

}  // namespace
}  // namespace parley
