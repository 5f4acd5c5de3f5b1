#include "kernels/attention_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "kernels/attention_q8.h"
#include "kernels/attention_rows.h"
#include "kernels/simd_avx2.h"
#include "util/fp16.h"

namespace parley::avx2 {
namespace {

// attention_rows.h's and attention_q8.h's vector set: 8 floats.
struct Vec8 {
  using V = __m256;
  using I = __m256i;
  static constexpr int W = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_store_ps(p, v); }
  static void storeu(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V abs(V v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static float hmax(V v) { return parley::hmax(v); }
  static V cvt(I i) { return _mm256_cvtepi32_ps(i); }
  static V f16(const uint8_t* p) { return _mm256_cvtph_ps(load128(p)); }
  static float half(const uint8_t* p) { return half_to_float(p); }
  static V half_bcast(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _mm256_cvtph_ps(_mm_set1_epi16(short(h)));
  }
  static V q8(const uint8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static void store_i16(int16_t* dst, V x) {
    const __m256i i = _mm256_cvtps_epi32(x);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                     _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1)));
  }
  static void widen(const uint8_t* qs, int16_t* dst) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(dst), _mm256_cvtepi8_epi16(load128(qs)));
    _mm256_store_si256(reinterpret_cast<__m256i*>(dst + 16), _mm256_cvtepi8_epi16(load128(qs + 16)));
  }
  static I block_dot(const uint8_t* qs, const int16_t* q16) {
    return _mm256_add_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(load128(qs)), load256(q16)),
                            _mm256_madd_epi16(_mm256_cvtepi8_epi16(load128(qs + 16)), load256(q16 + 16)));
  }
  static I block_dot(const int16_t* k16, const int16_t* q16) {
    return _mm256_add_epi32(_mm256_madd_epi16(load256(k16), load256(q16)),
                            _mm256_madd_epi16(load256(k16 + 16), load256(q16 + 16)));
  }
  static int32_t hsum_i(I i) { return hsum_epi32(i); }
  static float hsum(V v) { return parley::hsum(v); }
  // A transpose by pairwise adds instead of eight horizontal sums.
  static V sums(const V* a) {
    const __m256 t0 = _mm256_hadd_ps(a[0], a[1]), t1 = _mm256_hadd_ps(a[2], a[3]);
    const __m256 t2 = _mm256_hadd_ps(a[4], a[5]), t3 = _mm256_hadd_ps(a[6], a[7]);
    const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
  }
};

}  // namespace

void attention_scores(DType type, const uint8_t* const* rows, int32_t n, const float* q, int32_t group,
                      int32_t head_dim, float scale, float* s, int32_t s_stride) {
  if (type == DType::Q8_0) return q8_scores<Vec8>(rows, n, q, group, head_dim, scale, s, s_stride);
  scores_of<Vec8>(type, rows, n, q, group, head_dim, scale, s, s_stride);
}

void attention_values(DType type, const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride,
                      int32_t group, int32_t head_dim, float* out) {
  if (type == DType::Q8_0) return q8_values<Vec8>(rows, n, p, p_stride, group, head_dim, out);
  values_of<Vec8>(type, rows, n, p, p_stride, group, head_dim, out);
}

float exp_shifted(float* s, int32_t n, float max) {
  const __m256 m = _mm256_set1_ps(max);
  __m256 sum = _mm256_setzero_ps();
  int32_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + j), m));  // -inf - max underflows to 0
    _mm256_storeu_ps(s + j, e);
    sum = _mm256_add_ps(sum, e);
  }
  float total = hsum(sum);
  for (; j < n; ++j) {
    s[j] = std::isinf(s[j]) ? 0.0f : std::exp(s[j] - max);
    total += s[j];
  }
  return total;
}

float max_of(const float* s, int32_t n) {
  __m256 m = _mm256_set1_ps(-INFINITY);
  int32_t j = 0;
  for (; j + 8 <= n; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(s + j));
  float total = hmax(m);
  for (; j < n; ++j) total = std::max(total, s[j]);
  return total;
}

void f16_row_to_float(const uint8_t* src, float* dst, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, Vec8::f16(src + 2 * i));
  for (; i < n; ++i) dst[i] = half_to_float(src + 2 * i);
}

void q8_0_row_to_float(const uint8_t* src, float* dst, int32_t n) {
  q8_row_to_float<Vec8>(src, n / kQK, dst);
}

void float_row_to_f16(const float* src, uint8_t* dst, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) {
    const uint16_t h = fp32_to_fp16(src[i]);
    std::memcpy(dst + 2 * i, &h, 2);
  }
}

// Round half away from zero, as std::round: x - trunc(x) is exact, so the
// comparison with 0.5 decides ties the reference's way (round-to-nearest-even
// would not).
inline __m256i round_away(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
  const __m256 t = _mm256_round_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 frac = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_sub_ps(x, t));
  const __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
  return _mm256_cvttps_epi32(_mm256_add_ps(t, _mm256_and_ps(up, _mm256_or_ps(sign, _mm256_set1_ps(1.0f)))));
}

void float_row_to_q8_0(const float* src, uint8_t* dst, int32_t n) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int32_t i = 0; i < n; i += kQK, src += kQK, dst += sizeof(BlockQ8_0)) {
    __m256 x[4], amax = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) amax = _mm256_max_ps(amax, _mm256_and_ps(x[k] = _mm256_loadu_ps(src + 8 * k), abs_mask));
    const float d = hmax(amax) / 127.0f;
    const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) q[k] = round_away(_mm256_mul_ps(x[k], id));
    // packs interleave 128-bit lanes; the permute restores element order.
    const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + offsetof(BlockQ8_0, qs)),
                        _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    const uint16_t h = fp32_to_fp16(d);
    std::memcpy(dst, &h, 2);
  }
}

}  // namespace parley::avx2
