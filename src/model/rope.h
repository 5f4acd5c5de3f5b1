#pragma once
// Rotary position embedding: per-position cos/sin tables and their application.
#include <cstdint>
#include <vector>

#include "model/config.h"

namespace parley {

class Rope {
 public:
  // rope_freqs: optional per-frequency divisors (Llama 3 scaling, LongRoPE), rope_dim/2 of them.
  Rope(const ModelConfig& c, const float* rope_freqs);
  // Fills the cos/sin tables for n positions starting at `pos`.
  void prepare(int32_t pos, int32_t n);
  // Rotates the first rope_dim dims of each of n_heads heads of token t's vector.
  void apply(float* vec, int32_t n_heads, int32_t t) const;

 private:
  int32_t head_dim_, rope_dim_;
  RopeStyle style_;
  float scale_;
  std::vector<double> inv_freq_;
  double mscale_;  // magnitude of cos/sin (LongRoPE's and YaRN's attention factor)
  std::vector<float> cos_, sin_;  // [token][rope_dim / 2]
};

}  // namespace parley
