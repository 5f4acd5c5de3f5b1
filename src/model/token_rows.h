#pragma once
// The row-wise steps of a forward pass over n tokens' rows ([token][width]
// buffers): norms, residual adds and the gated activations. With enough rows they are split
// over the pool, so a long prefill does not leave the other cores idle
// between two matrix products; each row is computed the same either way.
#include <cstdint>

#include "kernels/thread_pool.h"

namespace parley {

// out[t] = rmsnorm(x[t]) * weight.
void rmsnorm_rows(ThreadPool& pool, float* out, const float* x, const float* weight, int32_t n, int32_t width,
                  float eps);
// y[t] += x[t].
void add_rows(ThreadPool& pool, float* y, const float* x, int32_t n, int32_t width);
// y[t] += bias for every row; nothing when bias is null (most models).
void add_bias_rows(ThreadPool& pool, float* y, const float* bias, int32_t n, int32_t width);
// gate[t] = silu(gate[t]) * up[t].
void swiglu_rows(ThreadPool& pool, float* gate, const float* up, int32_t n, int32_t width);
// gate[t] = gelu_tanh(gate[t]) * up[t].
void geglu_rows(ThreadPool& pool, float* gate, const float* up, int32_t n, int32_t width);

}  // namespace parley
