#pragma once
// AVX-512 row loops of the paged attention kernel for Q8_0 rows
// (attention_avx512.cpp); attention.cpp calls them on the avx512, vnni and
// amx paths when head_dim % 32 == 0, with the AVX2 ones' contracts
// (attention_avx2.h): attention_q8.h's loops 16 lanes wide. Scores take each
// query head rounded to int16 (one scale per head) against the keys' int8
// quants on vpmaddwd, so that no key element is converted to float; value sums
// convert each V element once, with the row's weight and block scale
// multiplied beforehand. F32 and F16 rows stay on the AVX2 loops: at 16 floats
// a step they ran as fast or up to 10% slower, bound by the per-row overhead
// rather than by the width (`bench_attention`, docs/performance.md).
#include <cstdint>

namespace parley::avx512 {

void attention_scores_q8_0(const uint8_t* const* rows, int32_t n, const float* q, int32_t group, int32_t head_dim,
                           float scale, float* s, int32_t s_stride);
void attention_values_q8_0(const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride, int32_t group,
                           int32_t head_dim, float* out);

}  // namespace parley::avx512
