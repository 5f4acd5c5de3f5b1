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

// Lane k = the maximum of v[k]'s 8 lanes: three rounds of pairwise maxima
// (within 128-bit halves twice, then across them).
inline __m256 lane_maxima(const __m256 v[8]) {
  __m256 m4[4], m2[2];
  for (int k = 0; k < 4; ++k)  // per half: v[2k], v[2k+1], v[2k], v[2k+1]
    m4[k] = _mm256_max_ps(_mm256_unpacklo_ps(v[2 * k], v[2 * k + 1]), _mm256_unpackhi_ps(v[2 * k], v[2 * k + 1]));
  for (int k = 0; k < 2; ++k)  // per half: v[4k] .. v[4k+3]
    m2[k] = _mm256_max_ps(_mm256_shuffle_ps(m4[2 * k], m4[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm256_shuffle_ps(m4[2 * k], m4[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  return _mm256_max_ps(_mm256_permute2f128_ps(m2[0], m2[1], 0x20), _mm256_permute2f128_ps(m2[0], m2[1], 0x31));
}

// Blocks of 32, eight at a time: the eight scales and their inverses take
// one vector division each instead of two dependent scalar ones per block
// (same IEEE quotients, so the same bytes).
void quantize8x32(const float* x, int8_t* q, float* d, const ActSums& out, int64_t b) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 amax[8];
  for (int k = 0; k < 8; ++k) {
    const float* xb = x + 32 * k;
    const __m256 m01 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(xb), abs_mask),
                                     _mm256_and_ps(_mm256_loadu_ps(xb + 8), abs_mask));
    const __m256 m23 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(xb + 16), abs_mask),
                                     _mm256_and_ps(_mm256_loadu_ps(xb + 24), abs_mask));
    amax[k] = _mm256_max_ps(m01, m23);
  }
  const __m256 vd = _mm256_div_ps(lane_maxima(amax), _mm256_set1_ps(127.0f));
  const __m256 nonzero = _mm256_cmp_ps(vd, _mm256_setzero_ps(), _CMP_NEQ_OQ);
  alignas(32) float id[8];
  _mm256_store_ps(id, _mm256_and_ps(nonzero, _mm256_div_ps(_mm256_set1_ps(1.0f), vd)));
  _mm256_storeu_ps(d + b, vd);
  for (int k = 0; k < 8; ++k) {
    int lo, hi;
    quantize32(x + 32 * k, _mm256_set1_ps(id[k]), q + 32 * k, lo, hi);
    if (out.s) out.s[b + k] = d[b + k] * float(lo + hi);
    if (out.sums) out.sums[b + k] = lo + hi;
  }
}

}  // namespace

void quantize_acts_avx2(const float* x, int64_t blocks, int block, int8_t* q, float* d, const ActSums& out) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  int64_t b = 0;
  if (block == 32 && !out.bsums)
    for (; b + 8 <= blocks; b += 8) quantize8x32(x + b * 32, q + b * 32, d, out, b);
  for (x += b * block, q += b * block; b < blocks; ++b, x += block, q += block) {
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
