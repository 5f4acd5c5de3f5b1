#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <new>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "engine/sampler.h"
#include "util/error.h"

// Counts heap allocations made by this thread while `g_count_allocations` is
// set, to check that sampling allocates nothing after construction.
namespace {
thread_local bool g_count_allocations = false;
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (g_count_allocations) ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// std::stable_sort's temporary buffer comes from the nothrow form: it must
// come from the same malloc as the delete below frees into.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (g_count_allocations) ++g_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
// Not inlined, so GCC does not see free() paired with operator new and warn.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace parley {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> random_logits(int32_t n, uint32_t seed, float scale = 3.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> logits(static_cast<size_t>(n));
  for (auto& l : logits) l = normal(rng);
  return logits;
}

std::vector<float> log_of(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

int32_t sample_copy(Sampler& s, const std::vector<float>& logits) {
  std::vector<float> copy = logits;
  return s.sample(copy.data());
}

// Relative frequency of each token over `draws` samples from fixed logits.
std::vector<double> frequencies(const SamplingParams& params, const std::vector<float>& logits,
                                int draws = 20000) {
  Sampler s(params, static_cast<int32_t>(logits.size()));
  std::vector<double> freq(logits.size(), 0.0);
  for (int i = 0; i < draws; ++i) freq[static_cast<size_t>(sample_copy(s, logits))] += 1.0;
  for (auto& f : freq) f /= draws;
  return freq;
}

// Tokens expected with probability 0 must never appear; the others within
// 0.015 (about 5 standard deviations at 20000 draws).
void expect_frequencies(const std::vector<double>& observed, const std::vector<double>& expected) {
  ASSERT_EQ(observed.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == 0.0) {
      EXPECT_EQ(observed[i], 0.0) << "token " << i << " is outside the kept set";
    } else {
      EXPECT_NEAR(observed[i], expected[i], 0.015) << "token " << i;
    }
  }
}

SamplingParams with_temperature(float t) {
  SamplingParams p;
  p.temperature = t;
  return p;
}

TEST(Sampler, GreedyPicksArgmax) {
  Sampler s(with_temperature(0.0f), 4);
  EXPECT_EQ(sample_copy(s, {0.1f, 2.5f, -1.0f, 2.4f}), 1);
  EXPECT_EQ(sample_copy(s, {-5.0f, -4.0f, -3.0f, -3.5f}), 2);
}

TEST(Sampler, GreedyTiesPickLowestId) {
  Sampler s(with_temperature(0.0f), 5);
  EXPECT_EQ(sample_copy(s, {1.0f, 3.0f, 0.0f, 3.0f, 3.0f}), 1);
  EXPECT_EQ(sample_copy(s, {-kInf, 7.0f, 7.0f, -kInf, 7.0f}), 1);
}

TEST(Sampler, TopKOneEqualsGreedy) {
  const std::vector<float> logits = random_logits(1000, 5, 1.0f);
  const auto greedy = std::max_element(logits.begin(), logits.end()) - logits.begin();
  for (uint64_t seed = 0; seed < 20; ++seed) {
    SamplingParams p;
    p.top_k = 1;
    p.seed = seed;
    Sampler s(p, 1000);
    EXPECT_EQ(sample_copy(s, logits), greedy) << "seed " << seed;
  }
}

TEST(Sampler, TemperatureTowardsZeroBecomesGreedy) {
  const std::vector<float> logits = {1.0f, 1.3f, 1.2f, 0.9f};
  // At temperature 1 the argmax is far from certain...
  EXPECT_LT(frequencies(with_temperature(1.0f), logits, 2000)[1], 0.5);
  // ...at 0.001 the others weigh exp(-100) and never come up.
  expect_frequencies(frequencies(with_temperature(0.001f), logits, 2000), {0, 1, 0, 0});
}

TEST(Sampler, TemperatureOneFollowsSoftmax) {
  const std::vector<double> probs = {0.1, 0.4, 0.2, 0.3};
  expect_frequencies(frequencies(with_temperature(1.0f), log_of(probs)), probs);
}

TEST(Sampler, TemperatureTwoFlattens) {
  // p^(1/2), normalised: sqrt(0.1, 0.4, 0.2, 0.3) / 2.1586
  const std::vector<double> probs = {0.1, 0.4, 0.2, 0.3};
  std::vector<double> expected;
  for (double p : probs) expected.push_back(std::sqrt(p));
  const double sum = std::accumulate(expected.begin(), expected.end(), 0.0);
  for (auto& e : expected) e /= sum;
  expect_frequencies(frequencies(with_temperature(2.0f), log_of(probs)), expected);
}

TEST(Sampler, TopKKeepsTheKMostLikely) {
  SamplingParams p;
  p.top_k = 2;
  expect_frequencies(frequencies(p, log_of({0.2, 0.1, 0.4, 0.3})), {0, 0, 4.0 / 7, 3.0 / 7});
}

TEST(Sampler, TopPKeepsSmallestSetReachingP) {
  // Sorted: 0.4 (id 2), 0.3 (id 3), 0.2 (id 0), 0.1 (id 1). Cumulative
  // 0.4, 0.7, 0.9: p = 0.75 needs the first three.
  const std::vector<float> logits = log_of({0.2, 0.1, 0.4, 0.3});
  SamplingParams p;
  p.top_p = 0.75f;
  expect_frequencies(frequencies(p, logits), {2.0 / 9, 0, 4.0 / 9, 3.0 / 9});
  p.top_p = 0.35f;  // the top token alone reaches it
  expect_frequencies(frequencies(p, logits, 2000), {0, 0, 1, 0});
}

TEST(Sampler, TopPCutsBetweenNearlyEqualTokens) {
  // Weights 1, 0.99, 0.98, 0.97 (within a few percent): cumulative shares
  // 0.254, 0.505, 0.754, 1; p = 0.6 keeps the first three.
  SamplingParams p;
  p.top_p = 0.6f;
  const std::vector<float> logits = {-0.0202027f, 0.0f, -0.0304592f, -0.0100503f};
  expect_frequencies(frequencies(p, logits), {0.98 / 2.97, 1 / 2.97, 0, 0.99 / 2.97});
  // Exact ties are ranked by id: with four equal tokens, p = 0.5 keeps 0 and 1.
  p.top_p = 0.5f;
  expect_frequencies(frequencies(p, std::vector<float>(4, 0.0f)), {0.5, 0.5, 0, 0});
}

TEST(Sampler, MinPKeepsTokensAboveFractionOfTheBest) {
  // min_p 0.2 of p_max 0.5 = 0.1: keeps 0.5, 0.25, 0.15; drops 0.06, 0.04.
  SamplingParams p;
  p.min_p = 0.2f;
  expect_frequencies(frequencies(p, log_of({0.06, 0.25, 0.5, 0.04, 0.15})),
                     {0, 0.25 / 0.9, 0.5 / 0.9, 0, 0.15 / 0.9});
}

// Draws at top_p = 0.5 from `logits` must all fall in the nucleus (ranked
// in double precision) and spread over it.
void expect_draws_in_nucleus(const std::vector<float>& logits) {
  const auto n = static_cast<int32_t>(logits.size());
  // Reference nucleus: rank of every token by probability, and the set size.
  std::vector<int32_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  std::vector<double> probs(logits.size());
  for (size_t i = 0; i < probs.size(); ++i) probs[i] = std::exp(double(logits[i]) - logits[order[0]]);
  const double total = std::accumulate(probs.begin(), probs.end(), 0.0);
  std::vector<size_t> rank(logits.size());
  size_t nucleus = 0;
  double cumulative = 0.0;
  for (size_t r = 0; r < order.size(); ++r) {
    rank[order[r]] = r;
    if (cumulative < 0.5 * total) {
      cumulative += probs[order[r]];
      nucleus = r + 1;
    }
  }
  ASSERT_GT(nucleus, 1000u) << "the nucleus should span many weight buckets";

  SamplingParams p;
  p.top_p = 0.5f;
  Sampler s(p, n);
  size_t highest_rank = 0;
  for (int i = 0; i < 300; ++i) {
    const size_t r = rank[static_cast<size_t>(sample_copy(s, logits))];
    EXPECT_LT(r, nucleus + 1);  // +1: float vs double rounding at the edge
    highest_rank = std::max(highest_rank, r);
  }
  EXPECT_GT(highest_rank, nucleus / 2) << "draws should spread over the nucleus";
}

TEST(Sampler, TopPOnLargeVocabularyStaysInTheNucleus) {
  expect_draws_in_nucleus(random_logits(50000, 11, 2.0f));
}

// Nearly equal logits put every token in one or two weight buckets: the
// crossing bucket is split again by finer keys before anything is sorted.
TEST(Sampler, TopPOnAFlatDistributionStaysInTheNucleus) {
  expect_draws_in_nucleus(random_logits(32000, 13, 0.01f));
}

// The sampler keeps its weights in blocks of 64 tokens: tokens in different
// blocks, with empty (banned) blocks between and the last block partial.
TEST(Sampler, DrawsFollowSoftmaxAcrossBlocks) {
  const int32_t n = 300;
  const std::vector<int32_t> ids = {3, 70, 150, 299};
  const std::vector<double> probs = {0.1, 0.4, 0.2, 0.3};
  std::vector<float> logits(n, -kInf);
  for (size_t i = 0; i < ids.size(); ++i) logits[size_t(ids[i])] = static_cast<float>(std::log(probs[i]));
  for (const int32_t top_k : {0, 3}) {
    SamplingParams p;
    p.top_k = top_k;
    const std::vector<double> f = frequencies(p, logits);
    std::vector<double> got, expected = probs;
    for (int32_t id : ids) got.push_back(f[size_t(id)]);
    if (top_k == 3) expected = {0, 0.4 / 0.9, 0.2 / 0.9, 0.3 / 0.9};
    expect_frequencies(got, expected);
  }
}

TEST(Sampler, TopKOnLargeVocabularyKeepsExactlyTheK) {
  const int32_t n = 32000, k = 40;
  std::vector<float> logits = random_logits(n, 12, 1.0f);
  logits[5] = logits[6] = 9.0f;  // two of the k in one block
  std::vector<float> sorted = logits;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  const float kth = sorted[size_t(k - 1)];
  SamplingParams p;
  p.top_k = k;
  p.temperature = 5.0f;  // flat enough that most of the k are drawn
  Sampler s(p, n);
  std::set<int32_t> drawn;
  for (int i = 0; i < 3000; ++i) {
    const int32_t t = sample_copy(s, logits);
    EXPECT_GE(logits[size_t(t)], kth);
    drawn.insert(t);
  }
  EXPECT_EQ(drawn.size(), size_t(k)) << "every one of the k should be drawn";
}

TEST(Sampler, PenaltiesChangeLogitsExactlyAsDefined) {
  SamplingParams p;
  p.repetition_penalty = 1.5f;
  p.frequency_penalty = 0.25f;
  p.presence_penalty = 0.5f;
  Sampler s(p, 6);
  for (int32_t t : {0, 0, 1, 3, 0}) s.accept(t);
  const std::vector<float> original = {2.0f, -1.0f, 0.5f, 3.0f, -2.0f, 1.0f};
  const std::vector<float> expected = {2.0f / 1.5f - 3 * 0.25f - 0.5f,
                                       -1.0f * 1.5f - 0.25f - 0.5f,
                                       0.5f,
                                       3.0f / 1.5f - 0.25f - 0.5f,
                                       -2.0f,
                                       1.0f};
  // Twice: the first call must leave the window's counts as they were.
  for (int round = 0; round < 2; ++round) {
    std::vector<float> logits = original;
    s.apply_penalties(logits.data());
    for (size_t i = 0; i < logits.size(); ++i) EXPECT_FLOAT_EQ(logits[i], expected[i]) << i;
  }
}

TEST(Sampler, PenaltyWindowForgetsOldTokens) {
  SamplingParams p;
  p.frequency_penalty = 1.0f;
  p.penalty_last_n = 3;
  Sampler s(p, 4);
  for (int32_t t : {0, 1, 2, 2, 2, 3}) s.accept(t);  // window: 2, 2, 3
  std::vector<float> logits(4, 0.0f);
  s.apply_penalties(logits.data());
  EXPECT_EQ(logits, (std::vector<float>{0.0f, 0.0f, -2.0f, -1.0f}));
}

TEST(Sampler, RepetitionPenaltySteersGreedyAwayFromRepeats) {
  SamplingParams p = with_temperature(0.0f);
  p.repetition_penalty = 2.0f;
  Sampler s(p, 3);
  const std::vector<float> logits = {3.0f, 2.0f, -1.0f};
  EXPECT_EQ(sample_copy(s, logits), 0);
  s.accept(0);
  EXPECT_EQ(sample_copy(s, logits), 1);  // 3/2 < 2
}

TEST(Sampler, LogitBiasAddsAndBans) {
  SamplingParams p = with_temperature(0.0f);
  p.logit_bias = {{1, -kInf}, {3, 0.5f}};
  Sampler s(p, 4);
  std::vector<float> logits = {1.0f, 4.0f, 2.0f, 1.75f};
  s.apply_penalties(logits.data());
  EXPECT_EQ(logits, (std::vector<float>{1.0f, -kInf, 2.0f, 2.25f}));
  EXPECT_EQ(sample_copy(s, {1.0f, 4.0f, 2.0f, 1.75f}), 3);

  p.temperature = 1.0f;
  p.logit_bias = {{2, -kInf}};
  expect_frequencies(frequencies(p, log_of({0.25, 0.25, 0.25, 0.25}), 4000),
                     {1.0 / 3, 1.0 / 3, 0, 1.0 / 3});
}

TEST(Sampler, AllTokensBannedIsAnError) {
  SamplingParams p;
  p.logit_bias = {{0, -kInf}, {1, -kInf}};
  Sampler s(p, 2);
  EXPECT_THROW(sample_copy(s, {1.0f, 2.0f}), Error);
}

std::vector<int32_t> generate(uint64_t seed, int steps) {
  SamplingParams p;
  p.temperature = 0.9f;
  p.top_k = 40;
  p.top_p = 0.95f;
  p.min_p = 0.02f;
  p.repetition_penalty = 1.1f;
  p.seed = seed;
  const int32_t n = 256;
  Sampler s(p, n);
  std::vector<int32_t> tokens;
  for (int i = 0; i < steps; ++i) {
    const int32_t t = sample_copy(s, random_logits(n, static_cast<uint32_t>(i), 1.0f));
    s.accept(t);
    tokens.push_back(t);
  }
  return tokens;
}

TEST(Sampler, SameSeedSameTokensDifferentSeedDifferent) {
  EXPECT_EQ(generate(42, 100), generate(42, 100));
  EXPECT_NE(generate(42, 100), generate(43, 100));
}

TEST(Sampler, SamplesWithoutAllocating) {
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_p = 0.9f;
  p.min_p = 0.01f;
  p.repetition_penalty = 1.1f;
  p.frequency_penalty = 0.1f;
  const int32_t n = 32000;
  Sampler s(p, n);
  std::vector<float> logits = random_logits(n, 3);
  std::vector<float> work(logits.size());
  g_allocations = 0;
  g_count_allocations = true;
  for (int i = 0; i < 20; ++i) {
    std::copy(logits.begin(), logits.end(), work.begin());
    s.accept(s.sample(work.data()));
  }
  g_count_allocations = false;
  EXPECT_EQ(g_allocations.load(), 0);
}

TEST(Sampler, RejectsInvalidParameters) {
  const auto rejects = [](auto change, int32_t vocab = 10) {
    SamplingParams p;
    change(p);
    EXPECT_THROW(Sampler(p, vocab), Error);
  };
  rejects([](SamplingParams& p) { p.temperature = -0.1f; });
  rejects([](SamplingParams& p) { p.temperature = std::nanf(""); });
  rejects([](SamplingParams& p) { p.temperature = kInf; });
  rejects([](SamplingParams& p) { p.top_k = -1; });
  rejects([](SamplingParams& p) { p.top_p = 0.0f; });
  rejects([](SamplingParams& p) { p.top_p = 1.01f; });
  rejects([](SamplingParams& p) { p.min_p = -0.01f; });
  rejects([](SamplingParams& p) { p.min_p = 1.5f; });
  rejects([](SamplingParams& p) { p.repetition_penalty = 0.0f; });
  rejects([](SamplingParams& p) { p.penalty_last_n = -1; });
  rejects([](SamplingParams& p) { p.logit_bias = {{10, 1.0f}}; });
  rejects([](SamplingParams& p) { p.logit_bias = {{-1, 1.0f}}; });
  rejects([](SamplingParams&) {}, 0);

  try {
    SamplingParams p;
    p.top_p = 2.0f;
    Sampler s(p, 10);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("top_p"), std::string::npos) << e.what();
  }
}

TEST(Sampler, AcceptsBoundaryParameters) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.top_p = 1.0f;
  p.min_p = 1.0f;
  p.top_k = 100;  // larger than the vocabulary: off
  p.penalty_last_n = 0;
  p.logit_bias = {{0, 1.0f}, {9, -1.0f}};
  EXPECT_NO_THROW(Sampler(p, 10));
}

TEST(Sampler, AcceptRejectsTokensOutsideTheVocabulary) {
  Sampler s(SamplingParams{}, 10);
  EXPECT_THROW(s.accept(10), Error);
  EXPECT_THROW(s.accept(-1), Error);
  EXPECT_NO_THROW(s.accept(9));
}

}  // namespace
}  // namespace parley

// A grammar's draw (engine/token_constraint) penalises once, then draws; the
// result is sample()'s, and a second draw from banned logits is the masked one.
TEST(Sampler, SamplePenalisedIsTheDrawOfSample) {
  std::vector<float> logits = {0.5f, 2.0f, 1.0f, -1.0f, 1.5f, 0.0f};
  parley::SamplingParams p;
  p.temperature = 0.8f;
  p.presence_penalty = 0.7f;
  p.seed = 11;
  parley::Sampler a(p, 6), b(p, 6);
  a.accept(1);
  b.accept(1);
  for (int i = 0; i < 50; ++i) {
    std::vector<float> la = logits, lb = logits;
    b.apply_penalties(lb.data());
    EXPECT_EQ(a.sample(la.data()), b.sample_penalised(lb.data()));
  }
  EXPECT_FALSE(a.truncates());
  p.top_p = 0.9f;
  EXPECT_TRUE(parley::Sampler(p, 6).truncates());
  p.temperature = 0.0f;  // greedy cuts nothing that a redraw could see
  EXPECT_FALSE(parley::Sampler(p, 6).truncates());
}
