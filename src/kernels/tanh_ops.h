#pragma once
// Element-wise steps built on tanh: Gemma's GeGLU gate and its soft-capping.
#include <cstdint>

namespace parley {

// gate = gelu(gate) * up, GELU in its tanh approximation.
void geglu(float* gate, const float* up, int64_t n);
// x = cap * tanh(x / cap): bounds x smoothly to (-cap, cap).
void softcap(float* x, int64_t n, float cap);

}  // namespace parley
