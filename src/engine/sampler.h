#pragma once
// Token sampling: greedy, temperature, top-k, top-p, min-p, penalties, logit
// bias, per-request seed. Allocation-free per token after construction.
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace parley {

struct SamplingParams {
  float temperature = 1.0f;         // 0 = greedy
  int32_t top_k = 0;                // 0 = off
  float top_p = 1.0f;               // 1 = off
  float min_p = 0.0f;               // 0 = off
  float repetition_penalty = 1.0f;  // 1 = off (CTRL-style: divide positive logits)
  float frequency_penalty = 0.0f;   // OpenAI-style, over the penalty window
  float presence_penalty = 0.0f;
  int32_t penalty_last_n = 64;      // window of recent tokens for the penalties
  std::vector<std::pair<int32_t, float>> logit_bias;
  uint64_t seed = 0;                // same seed + same logits = same tokens
};

class Sampler {
 public:
  Sampler(SamplingParams params, int32_t vocab_size);
  // Chooses the next token; `logits` (vocab_size floats) may be modified.
  int32_t sample(float* logits);
  // Records a token in the penalty window (prompt tokens too, if wanted).
  void accept(int32_t token);
  // The first step of sample(): adds the logit bias and applies the
  // repetition, frequency and presence penalties in place.
  void apply_penalties(float* logits);
  // The rest of sample(): the draw from logits already through apply_penalties.
  int32_t sample_penalised(const float* logits);
  // The distribution sample() draws from: the penalties applied to `logits`
  // in place, then temperature, top-k, top-p and min-p; `probs` receives
  // vocab_size probabilities (greedy: 1 for the argmax). Draws nothing.
  void probabilities(float* logits, float* probs);
  // Top-k, top-p or min-p cut the distribution down before the draw.
  bool truncates() const;
  const SamplingParams& params() const { return params_; }
  // The generator's state: its next values are the uniforms of the next
  // draws, one per sampled token (a draft model drafts with them).
  const std::mt19937_64& rng() const { return rng_; }

 private:
  SamplingParams params_;
  int32_t vocab_size_;
  std::mt19937_64 rng_;
  std::vector<int32_t> recent_;     // ring buffer of the penalty window
  size_t recent_pos_ = 0, recent_count_ = 0;
  std::vector<int32_t> counts_;     // occurrences within the window, per token
  std::vector<std::pair<float, int32_t>> candidates_;  // top-k's, then top-p's crossing bucket
  std::vector<float> weights_;       // per token: exp((logit - max) / T), 0 once filtered out
  static constexpr size_t kBlock = 64;
  std::vector<double> block_sum_;    // of weights_, per kBlock tokens
  std::vector<float> block_max_;     // top-k: of the logits, per kBlock tokens
  std::vector<double> bucket_sums_;  // top-p: total weight per weight bucket
  std::vector<double> sub_sums_;     // top-p: per finer bucket within the crossing one

  void weigh(const float* logits, float max_logit);
  void keep_top_k(const float* logits, size_t k);
  void keep_top_p();
  int32_t draw();
  size_t block_len(size_t b) const;
  template <class F>
  void for_weighted_blocks(F&& f) const {  // f(block) for each block with weight
    for (size_t b = 0; b < block_sum_.size(); ++b)
      if (block_sum_[b] > 0.0) f(b);
  }
  double uniform01();
};

}  // namespace parley
