#include "engine/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
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

}  // namespace

Sampler::Sampler(SamplingParams params, int32_t vocab_size)
    : params_(std::move(params)), vocab_size_(vocab_size), rng_(params_.seed) {
  validate(params_, vocab_size_);
  recent_.assign(static_cast<size_t>(params_.penalty_last_n), 0);
  counts_.assign(static_cast<size_t>(vocab_size_), 0);
  candidates_.reserve(static_cast<size_t>(vocab_size_));
  if (params_.top_p < 1.0f) bucket_sums_.resize(kNumKeys);
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
  // Lowest id wins ties; -inf and NaN logits are never chosen (-1 if all are).
  const auto best = static_cast<int32_t>(argmax(logits, vocab_size_));
  if (best < 0) throw Error("Sampler::sample: no token has a finite logit (all banned?)");
  // A +inf logit has probability 1 (and would turn the softmax into NaN).
  if (params_.temperature <= 0.0f || std::isinf(logits[best])) return best;
  return sample_distribution(logits, logits[best]);
}

int32_t Sampler::sample_distribution(const float* logits, float max_logit) {
  // Banned (-inf) and NaN logits never become candidates.
  candidates_.clear();
  for (int32_t i = 0; i < vocab_size_; ++i) {
    if (logits[i] > kNegInf) candidates_.emplace_back(logits[i], i);
  }
  const auto k = static_cast<size_t>(params_.top_k);
  if (k > 0 && k < candidates_.size()) {
    // Faster than nth_element for the usual small k (most candidates are
    // rejected by one comparison with the heap top), and fully sorted under
    // a total order, so the draw does not depend on the library.
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<ptrdiff_t>(k),
                      candidates_.end(), higher);
    candidates_.resize(k);
  }

  // Unnormalised softmax weights: the best token weighs exactly exp(0) = 1,
  // so min-p compares with min_p directly and normalising is left to the draw.
  double total = 0.0;
  for (auto& c : candidates_) {
    c.first = std::exp((c.first - max_logit) / params_.temperature);
    total += c.first;
  }
  if (params_.top_p < 1.0f) keep_top_p(total);
  if (params_.min_p > 0.0f) {
    const float min_weight = params_.min_p;
    std::erase_if(candidates_, [&](const auto& c) { return c.first < min_weight; });
  }

  total = 0.0;
  for (const auto& c : candidates_) total += c.first;
  const double target = uniform01() * total;
  double cumulative = 0.0;
  int32_t last_positive = candidates_.front().second;
  for (const auto& c : candidates_) {
    if (c.first <= 0.0f) continue;
    cumulative += c.first;
    last_positive = c.second;
    if (target < cumulative) return c.second;
  }
  return last_positive;  // only when rounding put target at the very end
}

// Keeps the smallest set of highest-weight candidates holding >= top_p of
// `total`, in linear time: a histogram over weight_key finds the bucket where
// the running sum crosses the target, and only that bucket is sorted. The
// order left behind comes from no unspecified library algorithm, so draws
// are the same on every standard library.
void Sampler::keep_top_p(double total) {
  std::fill(bucket_sums_.begin(), bucket_sums_.end(), 0.0);
  for (const auto& c : candidates_) bucket_sums_[weight_key(c.first)] += c.first;
  const double target = static_cast<double>(params_.top_p) * total;
  double kept = 0.0;  // weight of the buckets above the crossing one
  uint32_t cross = kNumKeys - 1;
  while (cross > 0 && kept + bucket_sums_[cross] < target) kept += bucket_sums_[cross--];

  std::erase_if(candidates_, [&](const auto& c) { return weight_key(c.first) < cross; });
  size_t front = 0;  // the buckets above `cross` go first, the crossing one after
  for (size_t i = 0; i < candidates_.size(); ++i) {
    if (weight_key(candidates_[i].first) > cross) std::swap(candidates_[front++], candidates_[i]);
  }
  std::sort(candidates_.begin() + static_cast<ptrdiff_t>(front), candidates_.end(), higher);
  for (size_t i = front; i < candidates_.size(); ++i) {
    kept += candidates_[i].first;
    if (kept >= target) {
      candidates_.resize(i + 1);
      return;
    }
  }
  // Rounding left the target unreached: the whole crossing bucket stays.
}

// 53 random bits scaled into [0, 1): the same value from the same mt19937_64
// output on every platform (std::uniform_real_distribution is not specified
// bit-exactly).
double Sampler::uniform01() {
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

}  // namespace parley
