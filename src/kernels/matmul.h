#pragma once
// Weight matrix x activations, for every weight DType.
// Decode (n_tokens == 1) is memory-bound; prefill / batched decode compute-bound.
#include <cstdint>
#include <span>

#include "kernels/dtype.h"
#include "kernels/thread_pool.h"

namespace parley {

// A row-major weight matrix: `rows` rows of `cols` elements, each row
// row_bytes(type, cols) bytes, rows contiguous. (GGUF dims = {cols, rows}.)
struct MatrixView {
  DType type = DType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
  // A copy in the layout of packed_gemm.h (Q8_0, Q4_0), made at load when it
  // speeds matmul() up on this CPU; `data` stays the row-major original.
  const void* packed = nullptr;
};

// y[t * w.rows + r] = sum_c W[r][c] * x[t * w.cols + c], for t < n_tokens.
// Activations may be quantized on the fly (e.g. to 8-bit for integer dot
// products). No allocation in the steady state. Work is split over `pool`.
void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool);

// Rows [r0, r1) of matmul() for float weights (F32, F16, BF16), on the
// calling thread: for callers that split several small products over the
// pool themselves. Each row's sum is the one matmul() computes.
void matmul_float_rows(const MatrixView& w, const float* x, float* y, int64_t n_tokens, int64_t r0, int64_t r1);

// One matrix's output: y = w x.
struct MatmulOutput {
  const MatrixView* w;
  float* y;
};

// matmul() of several matrices (at most 4) over the same activations: Q, K
// and V, or gate and up. When they share a type and a width the activations
// are quantized once and one parallel loop covers every row (fewer passes and
// pool wake-ups than separate calls); otherwise they run one by one.
void matmul_shared(std::span<const MatmulOutput> outs, const float* x, int64_t n_tokens, ThreadPool& pool);

}  // namespace parley
