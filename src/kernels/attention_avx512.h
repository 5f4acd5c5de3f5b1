#pragma once
// AVX-512 row loops of the paged attention kernel for Q8_0 rows
// (attention_avx512.cpp: the loops of attention_rows.h at 16 floats);
// attention.cpp calls them on the avx512, vnni and amx paths when head_dim %
// 32 == 0. Only Q8_0: there 16 floats a step beat AVX2 by 25%, while F32 and
// F16 rows, bound by the per-row overhead rather than by the width, ran as
// fast or up to 10% slower (`bench_attention`, docs/performance.md). Same
// contracts as the AVX2 ones (attention_avx2.h).
#include <cstdint>

namespace parley::avx512 {

void attention_scores_q8_0(const uint8_t* const* rows, int32_t n, const float* q, int32_t group, int32_t head_dim,
                           float scale, float* s, int32_t s_stride);
void attention_values_q8_0(const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride, int32_t group,
                           int32_t head_dim, float* out);

}  // namespace parley::avx512
