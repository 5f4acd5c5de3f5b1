#pragma once
// AVX-512 kernels for Q2_K, Q3_K and IQ4_XS, templated on the int8 dot policy
// (see matmul_512.h). One zmm holds 64 quants: four Q2_K / Q3_K sub-blocks or
// two IQ4_XS sub-blocks (or their halves), the scales spread over the lanes.
// Internal linkage: compiled separately into the AVX-512 and VNNI files.
#include <immintrin.h>

#include "kernels/blocks.h"
#include "kernels/matmul_k_512.h"
#include "kernels/matmul_kernels.h"
#include "kernels/simd_avx2.h"

namespace parley {
namespace {

// Q2_K (Q3 false) or Q3_K. Zmm v of half h holds elements 128h + 64v + 0..63:
// the 2-bit planes 2v (first 32) and 2v + 1 (next 32) of qs[32h..].
template <class Policy, bool Q3>
struct Q23KDot512 {
  static constexpr int kBytes = Q3 ? sizeof(BlockQ3_K) : sizeof(BlockQ2_K);
  const WeightRows& w;
  const Acts& x;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    const int64_t nb = x.blocks, cols = x.cols;
    const __m512i low2 = _mm512_set1_epi8(3);
    const __m512i shift[2] = {_mm512_inserti64x4(_mm512_set1_epi16(0), _mm256_set1_epi16(2), 1),
                              _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(6), 1)};
    __m512 acc[N];
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) acc[n] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < nb; ++sb) {
      const uint8_t* p = row + sb * kBytes;
      __m256i sc16, m16 = _mm256_setzero_si256();
      if constexpr (Q3) {  // hmask[32], qs[64], scales[12], d
        sc16 = _mm256_cvtepi8_epi16(q3_k_scales_epi8(p + 96));
      } else {  // scales[16], qs[64], d, dmin
        const __m256i raw = _mm256_cvtepu8_epi16(load128(p));
        sc16 = _mm256_and_si256(raw, _mm256_set1_epi16(15));
        m16 = _mm256_srli_epi16(raw, 4);
      }
      const __m512i sc = _mm512_castsi256_si512(sc16);
      const uint8_t* qs = p + (Q3 ? 32 : 16);
      const __m512i hm = Q3 ? _mm512_broadcast_i64x4(load256(p)) : _mm512_setzero_si512();
      __m512i isum[N];
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) isum[n] = _mm512_setzero_si512();
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m512i raw = _mm512_broadcast_i64x4(load256(qs + 32 * h));
#pragma GCC unroll 2
        for (int v = 0; v < 2; ++v) {
          __m512i u = _mm512_and_si512(_mm512_srlv_epi16(raw, shift[v]), low2);
          if constexpr (Q3) {  // bit 4h + 2v (first 32) / 4h + 2v + 1 (next 32) of hmask[l] is bit 2
            const __m512i bit = _mm512_inserti64x4(_mm512_set1_epi8(char(1 << (4 * h + 2 * v))),
                                                   _mm256_set1_epi8(char(1 << (4 * h + 2 * v + 1))), 1);
            u = _mm512_or_si512(u, _mm512_maskz_mov_epi8(_mm512_test_epi8_mask(hm, bit), _mm512_set1_epi8(4)));
          }
          const __m512i s = _mm512_permutexvar_epi16(sub16_index(8 * h + 4 * v), sc);
#pragma GCC unroll 8
          for (int n = 0; n < N; ++n)
            isum[n] = Policy::add_scaled(
                isum[n], u, _mm512_loadu_si512(x.q + (t0 + n) * cols + sb * 256 + 128 * h + 64 * v), s);
        }
      }
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const int64_t i = (t0 + n) * nb + sb;
        const __m256i bsums = load256(x.bsums + i * 16);
        if constexpr (Q3) {
          const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(bsums, sc16), 2);  // the quants' -4
          const __m512i total = _mm512_sub_epi32(isum[n], _mm512_zextsi256_si512(offset));
          acc[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_set1_ps(half_to_float(p + 108) * x.d[i]), acc[n]);
        } else {
          __m256 d, dmin;
          scale_pair(p + 80, x.d[i], d, dmin);
          acc[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[n]), _mm512_broadcast_f32x8(d), acc[n]);
          acc[n] = _mm512_fnmadd_ps(zext_cvt(_mm256_madd_epi16(bsums, m16)), _mm512_broadcast_f32x8(dmin), acc[n]);
        }
      }
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = _mm512_reduce_add_ps(acc[n]);
  }
};

// IQ4_XS where maddubs does the dots (the AVX-512BW path, on which
// IQ4XSOffsetDot512's unsigned codebook would saturate): zmm c holds
// sub-blocks 2c and 2c + 1; codebook values by vpshufb, their signs moved
// onto the activations.
template <class Policy>
struct IQ4XSDot512 {
  const WeightRows& w;
  const Acts& x;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    const int64_t nb = x.blocks, cols = x.cols;
    const __m512i codebook = _mm512_broadcast_i32x4(load128(kIq4Values));
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m512 acc[N];
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) acc[n] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < nb; ++sb) {
      const uint8_t* p = row + sb * int64_t(sizeof(BlockIQ4_XS));  // d, scales_h, scales_l[4], qs[128]
      const __m512i sc = _mm512_castsi128_si512(_mm256_cvtepi32_epi16(iq4_xs_scales_epi32(p + 2)));
      __m512i isum[N];
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) isum[n] = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const __m256i raw = load256(p + 8 + 32 * c);
        // [2c low nibbles, 2c+1 low, 2c high, 2c+1 high] -> element order.
        __m512i nib = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(raw, low4)),
                                         _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4), 1);
        nib = _mm512_shuffle_i64x2(nib, nib, _MM_SHUFFLE(3, 1, 2, 0));
        const __m512i q = _mm512_shuffle_epi8(codebook, nib);
        const __m512i u = _mm512_abs_epi8(q);
        const __mmask64 neg = _mm512_movepi8_mask(q);
        const __m512i s = _mm512_permutexvar_epi16(sub32_index(2 * c), sc);
#pragma GCC unroll 8
        for (int n = 0; n < N; ++n) {
          const __m512i xq = _mm512_loadu_si512(x.q + (t0 + n) * cols + sb * 256 + 64 * c);
          isum[n] = Policy::add_scaled(isum[n], u, _mm512_mask_sub_epi8(xq, neg, _mm512_setzero_si512(), xq), s);
        }
      }
      const float d = half_to_float(p);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n)
        acc[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[n]), _mm512_set1_ps(d * x.d[(t0 + n) * nb + sb]), acc[n]);
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = _mm512_reduce_add_ps(acc[n]);
  }
};

// IQ4_XS where u8 x s8 dots do not saturate (vpdpbusd): the codebook plus
// 128 as unsigned bytes, the 128 taken off through the activations' 16-sums.
// A 64-byte load covers sub-blocks 4c .. 4c+3: its low nibbles are their
// first 16 elements, the high nibbles the last 16, so the activations (not
// the weights) are shuffled to match and every 128-bit lane stays within one
// sub-block.
template <class Policy>
struct IQ4XSOffsetDot512 {
  const WeightRows& w;
  const Acts& x;

  // A token tile takes 2 rows a pass, which share the activations' loads and
  // shuffles; decode takes 1: two rows read as two streams from DRAM ran
  // slower on Zen 5 than the shuffles they save.
  template <int N>
  static constexpr int rows_per_pass = N == 1 ? 1 : 2;

  template <int N, int R>
  void dot_rows(const uint8_t* const* rows, int64_t t0, float* const* out) const {
    const int64_t nb = x.blocks, cols = x.cols;
    const __m512i codebook =
        _mm512_xor_si512(_mm512_broadcast_i32x4(load128(kIq4Values)), _mm512_set1_epi8(char(0x80)));
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i lanes4[2] = {_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
                               _mm512_setr_epi32(4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7)};
    __m512 acc[R][N];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) acc[r][n] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < nb; ++sb) {
      const uint8_t* p[R];  // d, scales_h, scales_l[4], qs[128]
      __m256i sc32[R];
      __m512i isum[R][N];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        p[r] = rows[r] + sb * int64_t(sizeof(BlockIQ4_XS));
        sc32[r] = iq4_xs_scales_epi32(p[r] + 2);
#pragma GCC unroll 8
        for (int n = 0; n < N; ++n) isum[r][n] = _mm512_setzero_si512();
      }
#pragma GCC unroll 2
      for (int c = 0; c < 2; ++c) {
        __m512i xlo[N], xhi[N];
#pragma GCC unroll 8
        for (int n = 0; n < N; ++n) {
          const int8_t* xq = x.q + (t0 + n) * cols + sb * 256 + 128 * c;
          const __m512i x0 = _mm512_loadu_si512(xq), x1 = _mm512_loadu_si512(xq + 64);
          xlo[n] = _mm512_shuffle_i64x2(x0, x1, _MM_SHUFFLE(2, 0, 2, 0));
          xhi[n] = _mm512_shuffle_i64x2(x0, x1, _MM_SHUFFLE(3, 1, 3, 1));
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const __m512i raw = _mm512_loadu_si512(p[r] + 8 + 64 * c);
          const __m512i lo = _mm512_shuffle_epi8(codebook, _mm512_and_si512(raw, low4));
          const __m512i hi = _mm512_shuffle_epi8(codebook, _mm512_and_si512(_mm512_srli_epi16(raw, 4), low4));
          const __m512i s = _mm512_permutexvar_epi32(lanes4[c], _mm512_castsi256_si512(sc32[r]));
#pragma GCC unroll 8
          for (int n = 0; n < N; ++n) {
            const __m512i dots = Policy::dot_acc(Policy::dot(lo, xlo[n]), hi, xhi[n]);  // lane L: sub-block 4c + L
            isum[r][n] = _mm512_add_epi32(isum[r][n], _mm512_mullo_epi32(dots, s));
          }
        }
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        // -128 * sc[j] in both int16 halves of lane j, against sub-block j's two 16-sums.
        const __m256i neg = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(sc32[r], 7));
        const __m512i offset = _mm512_zextsi256_si512(
            _mm256_or_si256(_mm256_and_si256(neg, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(neg, 16)));
        const float d = half_to_float(p[r]);
#pragma GCC unroll 8
        for (int n = 0; n < N; ++n) {
          const int64_t i = (t0 + n) * nb + sb;
          const __m512i total = Policy::madd16(isum[r][n], _mm512_zextsi256_si512(load256(x.bsums + i * 16)), offset);
          acc[r][n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_set1_ps(d * x.d[i]), acc[r][n]);
        }
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) out[r][n] = _mm512_reduce_add_ps(acc[r][n]);
  }
};

}  // namespace
}  // namespace parley
