#include "kernels/attention_avx2.h"

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstring>

#include "kernels/attention_rows.h"
#include "kernels/simd_avx2.h"
#include "util/fp16.h"

namespace parley::avx2 {
namespace {

// attention_rows.h's vector set: 8 floats.
struct Vec8 {
  using V = __m256;
  static constexpr int W = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_store_ps(p, v); }
  static void storeu(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V f16(const uint8_t* p) { return _mm256_cvtph_ps(load128(p)); }
  static V q8(const uint8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static float half(const uint8_t* p) { return half_to_float(p); }
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
  scores_of<Vec8>(type, rows, n, q, group, head_dim, scale, s, s_stride);
}

void attention_values(DType type, const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride,
                      int32_t group, int32_t head_dim, float* out) {
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

void f16_row_to_float(const uint8_t* src, float* dst, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, Vec8::f16(src + 2 * i));
  for (; i < n; ++i) dst[i] = half_to_float(src + 2 * i);
}

void q8_0_row_to_float(const uint8_t* src, float* dst, int32_t n) {
  for (int32_t i = 0; i < n; i += 8) _mm256_storeu_ps(dst + i, Q8_0Row<Vec8>::load(src, i));
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

}  // namespace parley::avx2
