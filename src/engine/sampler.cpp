#include "engine/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "kernels/ops.h"
#include "util/error.h"

namespace parley {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

void require(bool ok, const std::string& what) {
  if (!ok) throw Error("sampling parameters: " + what);
}

// Validates every field; comparisons are written so that NaN fails them.
void validate(const SamplingParams& p, int32_t vocab_size) {
  require(vocab_size > 0, "vocabulary size must be > 0, got " + std::to_string(vocab_size));
  require(p.temperature >= 0.0f && std::isfinite(p.temperature),
          "temperature must be finite and >= 0, got " + std::to_string(p.temperature));
  require(p.top_k >= 0, "top_k must be >= 0 (0 = off), got " + std::to_string(p.top_k));
  require(p.top_p > 0.0f && p.top_p <= 1.0f,
          "top_p must be in (0, 1], got " + std::to_string(p.top_p));
  require(p.min_p >= 0.0f && p.min_p <= 1.0f,
          "min_p must be in [0, 1], got " + std::to_string(p.min_p));
  require(p.repetition_penalty > 0.0f,
          "repetition_penalty must be > 0 (1 = off), got " + std::to_string(p.repetition_penalty));
  require(std::isfinite(p.frequency_penalty) && std::isfinite(p.presence_penalty),
          "frequency_penalty and presence_penalty must be finite");
  require(p.penalty_last_n >= 0,
          "penalty_last_n must be >= 0, got " + std::to_string(p.penalty_last_n));
  for (const auto& [id, bias] : p.logit_bias) {
    require(id >= 0 && id < vocab_size, "logit_bias token id " + std::to_string(id) +
                                            " is outside the vocabulary [0, " +
                                            std::to_string(vocab_size) + ")");
    require(!std::isnan(bias), "logit_bias for token " + std::to_string(id) + " is NaN");
  }
}

// Descending by value, ascending id on ties: a total order, so every sort
// below has one possible result whatever the standard library.
bool higher(const std::pair<float, int32_t>& a, const std::pair<float, int32_t>& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}

// Bit patterns of non-negative floats order like their values; keeping the
// exponent and 4 mantissa bits gives monotone buckets, 16 per factor of two.
constexpr int kKeyShift = 19;
constexpr uint32_t kNumKeys = (0x3F800000u >> kKeyShift) + 1;  // weights lie in [0, 1]

uint32_t weight_key(float weight) {
  return std::bit_cast<uint32_t>(weight) >> kKeyShift;
}

// The next 12 bits: within one bucket, monotone sub-buckets 4096 times finer.
constexpr int kSubShift = 7;
constexpr uint32_t kNumSubKeys = 1u << (kKeyShift - kSubShift);

uint32_t sub_key(float weight) {
  return (std::bit_cast<uint32_t>(weight) >> kSubShift) & (kNumSubKeys - 1);
}
constexpr size_t kSortDirectly = 512;  // a crossing bucket this small is sorted whole

}  // namespace

Sampler::Sampler(SamplingParams params, int32_t vocab_size)
    : params_(std::move(params)), vocab_size_(vocab_size), rng_(params_.seed) {
  validate(params_, vocab_size_);
  recent_.assign(static_cast<size_t>(params_.penalty_last_n), 0);
  counts_.assign(static_cast<size_t>(vocab_size_), 0);
  if (params_.temperature <= 0.0f) return;  // greedy: argmax only
  const size_t blocks = (static_cast<size_t>(vocab_size_) + kBlock - 1) / kBlock;
  candidates_.reserve(static_cast<size_t>(vocab_size_));
  weights_.resize(static_cast<size_t>(vocab_size_));
  block_sum_.resize(blocks);
  if (params_.top_k > 0) block_max_.resize(blocks);
  if (params_.top_p < 1.0f) {
    bucket_sums_.resize(kNumKeys);
    sub_sums_.resize(kNumSubKeys);
  }
}

void Sampler::accept(int32_t token) {
  if (token < 0 || token >= vocab_size_) {
    throw Error("Sampler::accept: token id " + std::to_string(token) +
                " is outside the vocabulary [0, " + std::to_string(vocab_size_) + ")");
  }
  if (recent_.empty()) return;
  if (recent_count_ == recent_.size()) {
    --counts_[static_cast<size_t>(recent_[recent_pos_])];  // evict the oldest
  } else {
    ++recent_count_;
  }
  recent_[recent_pos_] = token;
  ++counts_[static_cast<size_t>(token)];
  recent_pos_ = (recent_pos_ + 1) % recent_.size();
}

void Sampler::apply_penalties(float* logits) {
  for (const auto& [id, bias] : params_.logit_bias) logits[id] += bias;

  const float rep = params_.repetition_penalty;
  const float freq = params_.frequency_penalty;
  const float pres = params_.presence_penalty;
  if (rep == 1.0f && freq == 0.0f && pres == 0.0f) return;
  // A token may sit in the window several times but must be penalised once:
  // its count is flipped negative when done and restored afterwards, which
  // needs no extra memory.
  for (size_t i = 0; i < recent_count_; ++i) {
    const auto t = static_cast<size_t>(recent_[i]);
    const int32_t count = counts_[t];
    if (count <= 0) continue;
    float& l = logits[t];
    if (rep != 1.0f) l = l > 0.0f ? l / rep : l * rep;
    l -= static_cast<float>(count) * freq;
    l -= pres;
    counts_[t] = -count;
  }
  for (size_t i = 0; i < recent_count_; ++i) {
    int32_t& count = counts_[static_cast<size_t>(recent_[i])];
    if (count < 0) count = -count;
  }
}

int32_t Sampler::sample(float* logits) {
  apply_penalties(logits);
  return sample_penalised(logits);
}

bool Sampler::truncates() const {
  return params_.temperature > 0.0f && (params_.top_k > 0 || params_.top_p < 1.0f || params_.min_p > 0.0f);
}

int32_t Sampler::sample_penalised(const float* logits) {
  // Lowest id wins ties; -inf and NaN logits are never chosen (-1 if all are).
  const auto best = static_cast<int32_t>(argmax(logits, vocab_size_));
  if (best < 0) throw Error("Sampler::sample: no token has a finite logit (all banned?)");
  // A +inf logit has probability 1 (and would turn the softmax into NaN).
  if (params_.temperature <= 0.0f || std::isinf(logits[best])) return best;
  weigh(logits, logits[best]);
  return draw();
}

void Sampler::probabilities(float* logits, float* probs) {
  apply_penalties(logits);
  const auto best = static_cast<int32_t>(argmax(logits, vocab_size_));
  if (best < 0) throw Error("Sampler::probabilities: no token has a finite logit (all banned?)");
  if (params_.temperature <= 0.0f || std::isinf(logits[best])) {
    std::fill(probs, probs + vocab_size_, 0.0f);
    probs[best] = 1.0f;
    return;
  }
  weigh(logits, logits[best]);
  double total = 0.0;
  for (double s : block_sum_) total += s;
  const auto scale = static_cast<float>(1.0 / total);
  for (int32_t i = 0; i < vocab_size_; ++i) probs[i] = weights_[static_cast<size_t>(i)] * scale;
}

// Every token's weight in one array (0 = out) with its sums per block of
// kBlock tokens, filtered in place by top-k, top-p and min-p (draw() then
// walks the block sums). Blocks without weight are skipped throughout, so
// after top-k the work is that of the k candidates.
void Sampler::weigh(const float* logits, float max_logit) {
  float* w = weights_.data();
  const auto k = static_cast<size_t>(params_.top_k);
  if (k > 0 && k < static_cast<size_t>(vocab_size_)) {
    keep_top_k(logits, k);
    std::fill(weights_.begin(), weights_.end(), 0.0f);
    std::fill(block_sum_.begin(), block_sum_.end(), 0.0);
    for (const auto& [logit, id] : candidates_) {
      w[id] = std::exp((logit - max_logit) / params_.temperature);
      block_sum_[static_cast<size_t>(id) / kBlock] += w[id];
    }
  } else {
    exp_weights(logits, max_logit, params_.temperature, w, vocab_size_);
    for (size_t b = 0; b < block_sum_.size(); ++b) block_sum_[b] = sum(w + b * kBlock, block_len(b));
  }
  // The best token weighs exactly exp(0) = 1, so min-p compares with min_p
  // directly and normalising is left to the draw.
  if (params_.top_p < 1.0f) keep_top_p();
  if (params_.min_p > 0.0f)
    for_weighted_blocks([&](size_t b) {
      for (size_t i = b * kBlock, end = i + block_len(b); i < end; ++i) w[i] = w[i] < params_.min_p ? 0.0f : w[i];
      block_sum_[b] = sum(w + b * kBlock, block_len(b));
    });
}

// The k best of the finite logits into candidates_ (in `higher` order). Only
// tokens at or above the k-th largest of the blocks' maxima can be among
// them (k blocks hold a token that high), so the sort sees a few of them.
void Sampler::keep_top_k(const float* logits, size_t k) {
  float threshold = kNegInf;
  if (block_max_.size() > k) {
    for (size_t b = 0; b < block_max_.size(); ++b) block_max_[b] = max_of(logits + b * kBlock, block_len(b));
    std::nth_element(block_max_.begin(), block_max_.begin() + static_cast<ptrdiff_t>(k - 1), block_max_.end(),
                     std::greater<>());
    threshold = block_max_[k - 1];
  }
  candidates_.clear();
  for (int32_t i = 0; i < vocab_size_; ++i)
    if (logits[i] >= threshold && logits[i] > kNegInf) candidates_.emplace_back(logits[i], i);
  // Fully sorted under a total order, so the draw does not depend on the library.
  const size_t kept = std::min(k, candidates_.size());
  std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<ptrdiff_t>(kept), candidates_.end(),
                    higher);
  candidates_.resize(kept);
}

// Keeps the smallest set of highest-weight tokens holding >= top_p of the
// total, in linear time: a histogram over weight_key finds the bucket where
// the running sum crosses the target, a finer one over sub_key the part of
// that bucket where it does, and only that part is sorted. (A flat
// distribution, high temperature or an untrained model, puts thousands of
// tokens in one bucket: sorting them all cost 480 us a token at 32000.)
void Sampler::keep_top_p() {
  float* w = weights_.data();
  std::fill(bucket_sums_.begin(), bucket_sums_.end(), 0.0);
  double total = 0.0;
  for_weighted_blocks([&](size_t b) {
    for (size_t i = b * kBlock, end = i + block_len(b); i < end; ++i) bucket_sums_[weight_key(w[i])] += w[i];
    total += block_sum_[b];
  });
  const double target = static_cast<double>(params_.top_p) * total;
  double kept = 0.0;  // weight of the buckets above the crossing one
  uint32_t cross = kNumKeys - 1;
  while (cross > 0 && kept + bucket_sums_[cross] < target) kept += bucket_sums_[cross--];

  // Buckets below `cross` go; the crossing one's tokens are refined.
  candidates_.clear();
  for_weighted_blocks([&](size_t b) {
    for (size_t i = b * kBlock, end = i + block_len(b); i < end; ++i) {
      const uint32_t key = weight_key(w[i]);
      if (key < cross) w[i] = 0.0f;
      else if (key == cross && w[i] > 0.0f) candidates_.emplace_back(w[i], static_cast<int32_t>(i));
    }
  });
  if (candidates_.size() > kSortDirectly) {
    std::fill(sub_sums_.begin(), sub_sums_.end(), 0.0);
    for (const auto& c : candidates_) sub_sums_[sub_key(c.first)] += c.first;
    uint32_t sub = kNumSubKeys - 1;
    while (sub > 0 && kept + sub_sums_[sub] < target) kept += sub_sums_[sub--];
    size_t crossing = 0;  // sub-buckets above `sub` stay, those below go
    for (const auto& c : candidates_) {
      const uint32_t key = sub_key(c.first);
      if (key < sub) w[c.second] = 0.0f;
      else if (key == sub) candidates_[crossing++] = c;
    }
    candidates_.resize(crossing);
  }
  // Of the crossing sub-bucket, the heaviest until the target.
  std::sort(candidates_.begin(), candidates_.end(), higher);
  size_t i = 0;
  while (i < candidates_.size() && kept < target) kept += candidates_[i++].first;
  for (; i < candidates_.size(); ++i) w[candidates_[i].second] = 0.0f;
  for_weighted_blocks([&](size_t b) { block_sum_[b] = sum(w + b * kBlock, block_len(b)); });
}

// A token with probability weight / total: the block sums are walked to the
// block holding the target, then its tokens.
int32_t Sampler::draw() {
  const float* w = weights_.data();
  double total = 0.0;
  for (double s : block_sum_) total += s;
  const double target = uniform01() * total;
  double cumulative = 0.0;
  for (size_t b = 0; b < block_sum_.size(); ++b) {
    if (!(target < cumulative + block_sum_[b])) {
      cumulative += block_sum_[b];
      continue;
    }
    // Summed one by one the block may fall short of its float sum: then on.
    for (size_t i = b * kBlock, end = i + block_len(b); i < end; ++i) {
      cumulative += w[i];
      if (w[i] > 0.0f && target < cumulative) return static_cast<int32_t>(i);
    }
  }
  // Only when rounding put the target at the very end: the last token with weight.
  int32_t last = vocab_size_ - 1;
  while (last > 0 && !(w[last] > 0.0f)) --last;
  return last;
}

size_t Sampler::block_len(size_t b) const {
  return std::min(kBlock, static_cast<size_t>(vocab_size_) - b * kBlock);
}

// 53 random bits scaled into [0, 1): the same value from the same mt19937_64
// output on every platform (std::uniform_real_distribution is not specified
// bit-exactly).
double Sampler::uniform01() {
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

}  // namespace parley
