// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/attention_avx512.h"

#include <immintrin.h>

#include "kernels/attention_rows.h"
#include "kernels/simd_avx2.h"

namespace parley::avx512 {
namespace {

// Per 128-bit lane: a0+a1, a2+a3 of a, then of b (AVX2's hadd, four lanes wide).
inline __m512 hadd(__m512 a, __m512 b) {
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

// attention_rows.h's vector set: 16 floats.
struct Vec16 {
  using V = __m512;
  static constexpr int W = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_store_ps(p, v); }
  static void storeu(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V f16(const uint8_t* p) { return _mm512_cvtph_ps(load256(p)); }
  static V q8(const uint8_t* p) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load128(p))); }
  static float half(const uint8_t* p) { return half_to_float(p); }
  static float hsum(V v) { return _mm512_reduce_add_ps(v); }
  // Two levels of pairwise adds leave, in 128-bit lane L of u[i], lane L's
  // sums of a[4i .. 4i+3]; two levels of lane shuffles add the four lanes.
  static V sums(const V* a) {
    __m512 t[8], u[4];
    for (int i = 0; i < 8; ++i) t[i] = hadd(a[2 * i], a[2 * i + 1]);
    for (int i = 0; i < 4; ++i) u[i] = hadd(t[2 * i], t[2 * i + 1]);
    const __m512 y0 = _mm512_add_ps(_mm512_shuffle_f32x4(u[0], u[1], 0x44), _mm512_shuffle_f32x4(u[0], u[1], 0xee));
    const __m512 y1 = _mm512_add_ps(_mm512_shuffle_f32x4(u[2], u[3], 0x44), _mm512_shuffle_f32x4(u[2], u[3], 0xee));
    return _mm512_add_ps(_mm512_shuffle_f32x4(y0, y1, 0x88), _mm512_shuffle_f32x4(y0, y1, 0xdd));
  }
};

}  // namespace

void attention_scores_q8_0(const uint8_t* const* rows, int32_t n, const float* q, int32_t group, int32_t head_dim,
                           float scale, float* s, int32_t s_stride) {
  scores<Vec16, Q8_0Row<Vec16>>(rows, n, q, group, head_dim, scale, s, s_stride);
}

void attention_values_q8_0(const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride, int32_t group,
                           int32_t head_dim, float* out) {
  values<Vec16, Q8_0Row<Vec16>>(rows, n, p, p_stride, group, head_dim, out);
}

}  // namespace parley::avx512
