#pragma once
// Activations as the matmul kernels read them: the float rows for float
// weights, or 8-bit quantized rows for integer dot products (every path of a
// weight type uses the same quantized activations, so paths agree closely).
#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/thread_pool.h"

namespace parley {

enum class ActFormat {
  Float,   // F32 / F16 / BF16 weights
  Q8x32,   // 32-element block types: scale, d * sum(q) and sum(q) per 32
  Q8x256,  // K types: scale per 256, sums of q per 16
  Q8x32Sums16,  // Q8x32 and the sums of q per 16 (the packed Q3_K GEMM's sub-blocks)
};
ActFormat act_format(DType weights);

// Rows of n_tokens tokens, `cols` each. The quantized arrays hold kActPad more
// entries of finite values past the last token, so a kernel may read one block
// beyond a row's end (and multiply it by zero weights).
struct Acts {
  int64_t cols = 0;
  const float* f = nullptr;          // Float: [n_tokens][cols]
  const int8_t* q = nullptr;         // [n_tokens][cols]
  const float* d = nullptr;          // [n_tokens][blocks]; |q| <= 127, x ~ d * q
  const float* s = nullptr;          // Q8x32: d * sum(q) per block
  const int32_t* sums = nullptr;     // Q8x32: sum(q) per block (the packed GEMM's offset correction)
  const int16_t* bsums = nullptr;    // Q8x256, Q8x32Sums16: [n_tokens][cols / 16] sums of q
  int64_t blocks = 0;                // blocks per token (cols / 32 or cols / 256)
};
constexpr int64_t kActPad = 256;

// Quantizes as the weight type requires into buffers owned by the calling
// thread (grow-only, reused by its next call). Tokens are split over `pool`.
Acts prepare_acts(DType weights, const float* x, int64_t cols, int64_t n_tokens, ThreadPool& pool);
Acts prepare_acts(ActFormat format, const float* x, int64_t cols, int64_t n_tokens, ThreadPool& pool);

// The quantizing loop over `blocks` blocks of `block` values (32 or 256),
// filling q, d, and when not null: s (d * sum(q)), sums (sum(q)) or the
// 16-sums. The AVX2 version gives bit-identical results.
struct ActSums {
  float* s = nullptr;
  int32_t* sums = nullptr;
  int16_t* bsums = nullptr;
};
void quantize_acts(const float* x, int64_t blocks, int block, int8_t* q, float* d, const ActSums& out);
void quantize_acts_avx2(const float* x, int64_t blocks, int block, int8_t* q, float* d, const ActSums& out);

}  // namespace parley
