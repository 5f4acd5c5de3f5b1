#pragma once
// AVX2 + F16C pieces of the paged attention kernel (attention_avx2.cpp);
// attention.cpp calls them when the active path is AVX2 or better. Rows are
// K or V rows of one KV head straight from the cache, in F32, F16 or Q8_0;
// a null row is an empty slot and is skipped. Q8_0 rows (head_dim % 32 == 0)
// take attention_q8.h's integer loops, 8 lanes wide.
#include <cstdint>

#include "kernels/dtype.h"

namespace parley::avx2 {

// s[g * s_stride + j] = scale * (q_g . K_j) for the n rows; head_dim % 8 == 0.
void attention_scores(DType type, const uint8_t* const* rows, int32_t n, const float* q, int32_t group,
                      int32_t head_dim, float scale, float* s, int32_t s_stride);
// out_g += sum_j p[g * p_stride + j] * V_j; head_dim % 8 == 0.
void attention_values(DType type, const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride,
                      int32_t group, int32_t head_dim, float* out);

// s[j] = exp(s[j] - max) (0 for -inf); returns the sum. max >= every s[j].
float exp_shifted(float* s, int32_t n, float max);
// The largest of s[0, n) (-inf for n == 0).
float max_of(const float* s, int32_t n);

// Row conversions, with the same results as the reference ones in quant.h.
void f16_row_to_float(const uint8_t* src, float* dst, int32_t n);
void q8_0_row_to_float(const uint8_t* src, float* dst, int32_t n);  // n % 32 == 0
void float_row_to_f16(const float* src, uint8_t* dst, int32_t n);
void float_row_to_q8_0(const float* src, uint8_t* dst, int32_t n);  // n % 32 == 0

}  // namespace parley::avx2
