#include "kernels/tanh_ops.h"

#include <cmath>

#include "kernels/cpu.h"
#include "kernels/ops_avx2.h"

namespace parley {

void geglu(float* gate, const float* up, int64_t n) {
  if (use_avx2()) return avx2::geglu(gate, up, n);
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    gate[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x))) * up[i];
  }
}

void softcap(float* x, int64_t n, float cap) {
  if (use_avx2()) return avx2::softcap(x, n, cap);
  const float inv = 1.0f / cap;
  for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] * inv);
}

}  // namespace parley
