#pragma once
// The per-ISA matmul kernels behind matmul(): each computes a range of weight
// rows for every token. Paths without a kernel for a type return null and
// matmul() falls back to the next lower path (down to scalar, which has all).
#include <cstdint>

#include "kernels/acts.h"
#include "kernels/dtype.h"

namespace parley {

struct WeightRows {
  const uint8_t* data;
  int64_t row_bytes;
  int64_t rows;
  int64_t cols;
};

// y[t * w.rows + r] for r in [r0, r1) and t < n_tokens.
using RowsKernel = void (*)(const WeightRows& w, const Acts& x, int64_t n_tokens, int64_t r0,
                            int64_t r1, float* y);

RowsKernel scalar_kernel(DType type);
RowsKernel avx2_kernel(DType type);
RowsKernel avx2_k_kernel(DType type);      // the K types' part of avx2_kernel
RowsKernel avx2_k_low_kernel(DType type);  // Q2_K, Q3_K, IQ4_XS: part of avx2_k_kernel
RowsKernel avx512_kernel(DType type);
RowsKernel vnni_kernel(DType type);
RowsKernel bf16_kernel(DType type);  // BF16 weights with AVX512-BF16 (any AVX-512 path)

}  // namespace parley
