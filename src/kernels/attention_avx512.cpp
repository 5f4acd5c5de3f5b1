// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/attention_avx512.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/attention_q8.h"
#include "kernels/simd_avx2.h"

namespace parley::avx512 {
namespace {

// Per 128-bit lane: a0+a1, a2+a3 of a, then of b (AVX2's hadd, four lanes wide).
inline __m512 hadd(__m512 a, __m512 b) {
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

// The 16 sums of a[0..15]'s lanes, in order: two levels of pairwise adds
// leave, in 128-bit lane L of u[i], lane L's sums of a[4i .. 4i+3]; two
// levels of lane shuffles add the four lanes. Forced inline: a call would
// pass a[] through memory.
[[gnu::always_inline]] inline __m512 sums16(const __m512* a) {
  __m512 t[8], u[4];  // unrolled by pragma, or GCC 12 keeps them in memory
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) t[i] = hadd(a[2 * i], a[2 * i + 1]);
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) u[i] = hadd(t[2 * i], t[2 * i + 1]);
  const __m512 y0 = _mm512_add_ps(_mm512_shuffle_f32x4(u[0], u[1], 0x44), _mm512_shuffle_f32x4(u[0], u[1], 0xee));
  const __m512 y1 = _mm512_add_ps(_mm512_shuffle_f32x4(u[2], u[3], 0x44), _mm512_shuffle_f32x4(u[2], u[3], 0xee));
  return _mm512_add_ps(_mm512_shuffle_f32x4(y0, y1, 0x88), _mm512_shuffle_f32x4(y0, y1, 0xdd));
}

// attention_q8.h's vector set: 16 floats.
struct Vec16 {
  using V = __m512;
  using I = __m512i;
  static constexpr int W = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V abs(V v) { return _mm512_abs_ps(v); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static float hmax(V v) { return _mm512_reduce_max_ps(v); }
  static V cvt(I i) { return _mm512_cvtepi32_ps(i); }
  static float half(const uint8_t* p) { return half_to_float(p); }
  static V half_bcast(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _mm512_cvtph_ps(_mm256_set1_epi16(short(h)));
  }
  static V q8(const uint8_t* p) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load128(p))); }
  static void store_i16(int16_t* dst, V x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm512_cvtsepi32_epi16(_mm512_cvtps_epi32(x)));
  }
  static void widen(const uint8_t* qs, int16_t* dst) { _mm512_store_si512(dst, _mm512_cvtepi8_epi16(load256(qs))); }
  static I block_dot(const uint8_t* qs, const int16_t* q16) {
    return _mm512_madd_epi16(_mm512_cvtepi8_epi16(load256(qs)), _mm512_load_si512(q16));
  }
  static I block_dot(const int16_t* k16, const int16_t* q16) {
    return _mm512_madd_epi16(_mm512_load_si512(k16), _mm512_load_si512(q16));
  }
  static int32_t hsum_i(I i) { return _mm512_reduce_add_epi32(i); }
  [[gnu::always_inline]] static V sums(const V* a) { return sums16(a); }
};

}  // namespace

void attention_scores_q8_0(const uint8_t* const* rows, int32_t n, const float* q, int32_t group, int32_t head_dim,
                           float scale, float* s, int32_t s_stride) {
  q8_scores<Vec16>(rows, n, q, group, head_dim, scale, s, s_stride);
}

void attention_values_q8_0(const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride, int32_t group,
                           int32_t head_dim, float* out) {
  q8_values<Vec16>(rows, n, p, p_stride, group, head_dim, out);
}

}  // namespace parley::avx512
