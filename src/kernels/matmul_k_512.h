#pragma once
// AVX-512 kernels for the K types, templated on the int8 dot policy (see
// matmul_512.h). One zmm holds 64 quants: two Q4_K/Q5_K sub-blocks or four
// Q6_K sub-blocks; their int16 scales are spread over the lanes by vpermw.
// Internal linkage: compiled separately into the AVX-512 and VNNI files.
#include <immintrin.h>

#include "kernels/blocks.h"
#include "kernels/matmul_kernels.h"
#include "kernels/simd_avx2.h"

namespace parley {
namespace {

// int16 lane j of a zmm of 64 quants -> the scale of its sub-block, as a
// vpermw index: lanes of 16-element sub-blocks are (j / 8), of 32-element
// ones (j / 16). Written as int32 pairs of equal int16 values.
inline __m512i sub16_index(int first) {
  const int f = first * 0x10001;
  return _mm512_add_epi32(_mm512_set1_epi32(f), _mm512_setr_epi32(0, 0, 0, 0, 0x10001, 0x10001, 0x10001,
                                                                   0x10001, 0x20002, 0x20002, 0x20002,
                                                                   0x20002, 0x30003, 0x30003, 0x30003, 0x30003));
}
inline __m512i sub32_index(int first) {
  const int f = first * 0x10001;
  return _mm512_add_epi32(_mm512_set1_epi32(f), _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0x10001, 0x10001,
                                                                   0x10001, 0x10001, 0x10001, 0x10001,
                                                                   0x10001, 0x10001));
}

inline __m512 zext_cvt(__m256i v) { return _mm512_cvtepi32_ps(_mm512_zextsi256_si512(v)); }

template <class Policy, bool HasHigh>
struct Q45KDot512 {
  static constexpr int kBytes = HasHigh ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
  const WeightRows& w;
  const Acts& x;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    const int64_t nb = x.blocks, cols = x.cols;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m512 acc[N];
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) acc[n] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < nb; ++sb) {
      const uint8_t* p = row + sb * kBytes;  // d, dmin, scales[12], (qh[32]), qs[128]
      uint64_t sc, m;
      unpack_k_scales(p + 4, sc, m);
      const __m512i sc16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(sc))));
      const uint8_t* qs = p + 16 + (HasHigh ? 32 : 0);
      const __m512i high = HasHigh ? _mm512_broadcast_i64x4(load256(p + 16)) : _mm512_setzero_si512();
      __m512i isum[N];
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) isum[n] = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {  // sub-blocks 2c (low nibbles) and 2c+1 (high nibbles)
        const __m256i raw = load256(qs + 32 * c);
        __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(raw, low4)),
                                       _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4), 1);
        if constexpr (HasHigh) {  // bit 2c (first half) / 2c+1 (second) of qh[l] -> 16
          const __m512i bit = _mm512_inserti64x4(_mm512_set1_epi8(char(1 << (2 * c))),
                                                 _mm256_set1_epi8(char(1 << (2 * c + 1))), 1);
          q = _mm512_or_si512(q, _mm512_maskz_mov_epi8(_mm512_test_epi8_mask(high, bit),
                                                       _mm512_set1_epi8(0x10)));
        }
        const __m512i s = _mm512_permutexvar_epi16(sub32_index(2 * c), sc16);
#pragma GCC unroll 8
        for (int n = 0; n < N; ++n)
          isum[n] = Policy::add_scaled(
              isum[n], q, _mm512_loadu_si512(x.q + (t0 + n) * cols + sb * 256 + 64 * c), s);
      }
      const __m256i mins = pairs_epi16(m);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const int64_t i = (t0 + n) * nb + sb;
        __m256 d, dmin;
        scale_pair(p, x.d[i], d, dmin);
        const __m256i msum = _mm256_madd_epi16(load256(x.bsums + i * 16), mins);  // m[j] * 16-sums
        acc[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[n]), _mm512_broadcast_f32x8(d), acc[n]);
        acc[n] = _mm512_fnmadd_ps(zext_cvt(msum), _mm512_broadcast_f32x8(dmin), acc[n]);
      }
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = _mm512_reduce_add_ps(acc[n]);
  }
};

template <class Policy>
struct Q6KDot512 {
  const WeightRows& w;
  const Acts& x;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    const int64_t nb = x.blocks, cols = x.cols;
    const __m512i low4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    // Per int16 lane: first 32 quants (elements l), then the next 32 (l + 32).
    const __m512i shl = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    const __m512i shr = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    __m512 acc[N];
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) acc[n] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < nb; ++sb) {
      const uint8_t* p = row + sb * int64_t(sizeof(BlockQ6_K));  // ql[128], qh[64], scales[16], d
      const __m256i sc16 = _mm256_cvtepi8_epi16(load128(p + 192));
      const __m512i sc = _mm512_castsi256_si512(sc16);
      __m512i isum[N];
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) isum[n] = _mm512_setzero_si512();
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m512i ql = _mm512_loadu_si512(p + 64 * h);
        const __m512i qh = _mm512_broadcast_i64x4(load256(p + 128 + 32 * h));
        // Elements 128h + 0..63 (low nibbles, qh bits 0-3) and + 64..127 (high nibbles, bits 4-7).
        const __m512i lo = _mm512_or_si512(_mm512_and_si512(ql, low4),
                                           _mm512_and_si512(_mm512_sllv_epi16(qh, shl), bits45));
        const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4),
                                           _mm512_and_si512(_mm512_srlv_epi16(qh, shr), bits45));
        const __m512i s_lo = _mm512_permutexvar_epi16(sub16_index(8 * h), sc);
        const __m512i s_hi = _mm512_permutexvar_epi16(sub16_index(8 * h + 4), sc);
#pragma GCC unroll 8
        for (int n = 0; n < N; ++n) {
          const int8_t* xq = x.q + (t0 + n) * cols + sb * 256 + 128 * h;
          isum[n] = Policy::add_scaled(isum[n], lo, _mm512_loadu_si512(xq), s_lo);
          isum[n] = Policy::add_scaled(isum[n], hi, _mm512_loadu_si512(xq + 64), s_hi);
        }
      }
      const float d = half_to_float(p + 208);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const int64_t i = (t0 + n) * nb + sb;
        const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(load256(x.bsums + i * 16), sc16), 5);
        const __m512i total = _mm512_sub_epi32(isum[n], _mm512_zextsi256_si512(offset));  // the -32
        acc[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_set1_ps(d * x.d[i]), acc[n]);
      }
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = _mm512_reduce_add_ps(acc[n]);
  }
};

}  // namespace
}  // namespace parley
