#pragma once
// Element-wise and row operations of the transformer forward pass.
#include <cstdint>

namespace parley {

// out = x / rms(x) * weight (weight may be null: no scale)
void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps);
void softmax(float* x, int64_t n);                        // in place, numerically stable
void swiglu(float* gate, const float* up, int64_t n);     // gate = silu(gate) * up
void add(float* y, const float* x, int64_t n);            // y += x
float dot(const float* a, const float* b, int64_t n);
void axpy(float* y, float a, const float* x, int64_t n);  // y += a * x

}  // namespace parley
