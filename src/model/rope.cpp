#include "model/rope.h"

#include <cmath>

#include "kernels/ops.h"
#include "model/rope_scaling.h"

namespace parley {

Rope::Rope(const ModelConfig& c, const float* rope_freqs)
    : head_dim_(c.head_dim), rope_dim_(c.rope_dim), style_(c.rope_style), scale_(c.rope_scale) {
  RopeFrequencies f = rope_frequencies(c, rope_freqs);
  inv_freq_ = std::move(f.inv_freq);
  mscale_ = f.mscale;
}

void Rope::prepare(int32_t pos, int32_t n) {
  const size_t half = inv_freq_.size();
  cos_.resize(size_t(n) * half);
  sin_.resize(size_t(n) * half);
  for (int32_t t = 0; t < n; ++t) {
    const double p = double(pos + t) / double(scale_);
    for (size_t i = 0; i < half; ++i) {
      const double theta = p * inv_freq_[i];
      cos_[size_t(t) * half + i] = float(std::cos(theta) * mscale_);
      sin_[size_t(t) * half + i] = float(std::sin(theta) * mscale_);
    }
  }
}

void Rope::apply(float* vec, int32_t n_heads, int32_t t) const {
  const size_t half = inv_freq_.size();
  const float* cs = cos_.data() + size_t(t) * half;
  const float* sn = sin_.data() + size_t(t) * half;
  // Interleaved rotates (2i, 2i+1); NeoX rotates (i, i + rope_dim/2).
  const bool interleaved = style_ == RopeStyle::Interleaved;
  for (int32_t h = 0; h < n_heads; ++h)
    rope_rotate(vec + size_t(h) * size_t(head_dim_), cs, sn, int64_t(half), interleaved);
}

}  // namespace parley
