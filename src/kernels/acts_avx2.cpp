// AVX2 activation quantization: the same arithmetic as acts.cpp's scalar loop
// (max |x|, d = amax / 127, round-to-nearest-even of x * (1 / d), integer sums),
// so both give bit-identical activations.
#include <immintrin.h>

#include "kernels/acts.h"
#include "kernels/simd_avx2.h"

namespace parley {
namespace {

// 32 floats times id -> 32 int8 in order; returns the sums of the two halves.
inline void quantize32(const float* x, __m256 id, int8_t* q, int& sum_lo, int& sum_hi) {
  __m256i i[4];
  for (int k = 0; k < 4; ++k) i[k] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), id));
  // packs interleave 128-bit lanes; the permute restores element order.
  const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i[0], i[1]), _mm256_packs_epi32(i[2], i[3]));
  const __m256i v = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), v);
  const __m256i lo = _mm256_add_epi32(i[0], i[1]), hi = _mm256_add_epi32(i[2], i[3]);
  __m256i h = _mm256_hadd_epi32(lo, hi);  // lane sums of lo (0,1 | 4,5) and hi (2,3 | 6,7)
  h = _mm256_hadd_epi32(h, h);
  const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  sum_lo = _mm_cvtsi128_si32(s);
  sum_hi = _mm_extract_epi32(s, 1);
}

}  // namespace

void quantize_acts_avx2(const float* x, int64_t blocks, int block, int8_t* q, float* d, const ActSums& out) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t b = 0; b < blocks; ++b, x += block, q += block) {
    __m256 amax = _mm256_setzero_ps();
    for (int i = 0; i < block; i += 8) amax = _mm256_max_ps(amax, _mm256_and_ps(_mm256_loadu_ps(x + i), abs_mask));
    d[b] = hmax(amax) / 127.0f;
    const __m256 id = _mm256_set1_ps(d[b] != 0.0f ? 1.0f / d[b] : 0.0f);
    int total = 0;
    for (int i = 0; i < block; i += 32) {
      int lo, hi;
      quantize32(x + i, id, q + i, lo, hi);
      total += lo + hi;
      if (out.bsums) {
        out.bsums[b * block / 16 + i / 16] = int16_t(lo);
        out.bsums[b * block / 16 + i / 16 + 1] = int16_t(hi);
      }
    }
    if (out.s) out.s[b] = d[b] * float(total);
    if (out.sums) out.sums[b] = total;
  }
}

}  // namespace parley
