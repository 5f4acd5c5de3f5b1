#pragma once
// AVX-512 matmul kernels, templated on an int8 dot policy so that the
// AVX-512BW file (maddubs + madd) and the VNNI file (vpdpbusd / vpdpwssd)
// share them:
//   Policy::dot(u, s)              int32 lanes of sum(u * s) over 4 bytes
//   Policy::dot_acc(acc, u, s)     acc + dot(u, s)
//   Policy::add_scaled(acc, u, x, s16)  acc + madd(maddubs(u, x), s16)
//   Policy::madd16(acc, a, b)      acc + madd(a, b), int16 pairs
//   Policy::kExactU8               dot is exact for any u (no int16 saturation)
// u unsigned bytes, s / x signed, s16 int16 scales.
// Internal linkage: each including file gets its own copy for its flags.
#include <immintrin.h>

#include "kernels/blocks.h"
#include "kernels/matmul_k_512.h"
#include "kernels/matmul_k_low_512.h"
#include "kernels/matmul_kernels.h"
#include "kernels/simd_avx2.h"
#include "kernels/tile.h"

namespace parley {
namespace {

constexpr int kTokenTile512 = 4;

struct F32Format512 {
  static constexpr int kBytes = 4;
  static __m512 load(const uint8_t* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
};
struct F16Format512 {
  static constexpr int kBytes = 2;
  static __m512 load(const uint8_t* p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
};
struct BF16Format512 {
  static constexpr int kBytes = 2;
  static __m512 load(const uint8_t* p, __mmask16 m) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
  }
};

template <class Format>
struct FloatDot512 {
  static constexpr int B = Format::kBytes;
  const WeightRows& w;
  const Acts& x;

  // Lanes of the 16 columns from c that lie inside the row.
  __mmask16 lanes(int64_t c) const { return x.cols - c >= 16 ? __mmask16(0xffff) : __mmask16((1u << (x.cols - c)) - 1); }

  // Rows per pass: one chain of FMAs per row and token, so decode (one
  // token) takes 8 rows to keep the FMA units busy; a tile of 4 tokens shares
  // each activation load between 4 rows within the registers (16 chains;
  // with 2 rows, F32 prefill ran a third slower).
  template <int N>
  static constexpr int rows_per_pass = N == 1 ? 8 : 4;

  // Every row's sum runs in one order, 16 columns at a time, whatever the
  // rows and tokens around it: a token's result must not depend on its batch.
  template <int N, int R>
  void dot_rows(const uint8_t* const* rows, int64_t t0, float* const* out) const {
    const int64_t cols = x.cols;
    const float* xt = x.f + t0 * cols;
    __m512 acc[R][N];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) acc[r][n] = _mm512_setzero_ps();
    const auto step = [&](int64_t c, __mmask16 m) {  // lanes past the row load as zero
      __m512 wv[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) wv[r] = Format::load(rows[r] + c * B, m);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const __m512 xv = _mm512_maskz_loadu_ps(m, xt + n * cols + c);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) acc[r][n] = _mm512_fmadd_ps(wv[r], xv, acc[r][n]);
      }
    };
    int64_t c = 0;
    for (; c + 16 <= cols; c += 16) step(c, 0xffff);
    if (c < cols) step(c, lanes(c));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) out[r][n] = _mm512_reduce_add_ps(acc[r][n]);
  }
};

// Two consecutive 32-element blocks (the second all zero past the row's end):
// 64 quants, and per block the scale d and the c term (see Block32Dot512).
struct BlockPair {
  __m512i u;        // unsigned quants, or |q| for signed ones
  __mmask64 neg;    // signed quants (Q8_0): the negative ones
  __m128 d;         // d0, d1 in lanes 0-1; lanes 2-3 are not used
  __m128 c;         // c0, c1 in lanes 0-1; lanes 2-3 meet zero activation sums
};

// The half at p and, when `two`, the one at p + stride, as floats in lanes 0
// and 1; with HasMin also the halves 2 bytes further in lanes 2 and 3.
// Absent values are zero.
template <bool HasMin>
inline __m128 halves_ps(const uint8_t* p, int stride, bool two) {
  const auto half = [](const uint8_t* q) {
    uint16_t h;
    std::memcpy(&h, q, 2);
    return int(h);
  };
  __m128i h = _mm_cvtsi32_si128(half(p));
  if constexpr (HasMin) h = _mm_insert_epi16(h, half(p + 2), 2);
  if (two) {
    h = _mm_insert_epi16(h, half(p + stride), 1);
    if constexpr (HasMin) h = _mm_insert_epi16(h, half(p + stride + 2), 3);
  }
  return _mm_cvtph_ps(h);
}

struct Q8_0Format512 {
  static constexpr int kBytes = sizeof(BlockQ8_0);
  static constexpr bool kHasC = false;
  static BlockPair load(const uint8_t* p, bool two) {
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(load256(p + 2)),
                                         two ? load256(p + kBytes + 2) : _mm256_setzero_si256(), 1);
    return {_mm512_abs_epi8(q), _mm512_movepi8_mask(q),
            halves_ps<false>(p, kBytes, two), _mm_setzero_ps()};
  }
  template <class Policy>
  static __m512i dot(const BlockPair& b, __m512i xq) {  // the weights' signs move onto x
    return Policy::dot(b.u, _mm512_mask_sub_epi8(xq, b.neg, _mm512_setzero_si512(), xq));
  }
};

// Q4_0 / Q4_1 / Q5_0 / Q5_1 as in the AVX2 file: unsigned quants, with the
// offset or min in the c term.
template <int Offset, bool HasMin, bool HasHigh>
struct UnsignedFormat512 {
  static constexpr int kBytes = 2 + (HasMin ? 2 : 0) + (HasHigh ? 4 : 0) + 16;
  static constexpr int kQs = kBytes - 16;
  static constexpr bool kHasC = true;
  static BlockPair load(const uint8_t* p, bool two) {
    const __m256i nib = _mm256_set_m128i(two ? load128(p + kBytes + kQs) : _mm_setzero_si128(), load128(p + kQs));
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    // [block 0 low nibbles, block 1 low, block 0 high, block 1 high] -> element order.
    __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(nib, low4)),
                                   _mm256_and_si256(_mm256_srli_epi16(nib, 4), low4), 1);
    u = _mm512_shuffle_i64x2(u, u, _MM_SHUFFLE(3, 1, 2, 0));
    if constexpr (HasHigh) {
      uint32_t h0, h1 = 0;
      std::memcpy(&h0, p + kQs - 4, 4);
      if (two) std::memcpy(&h1, p + kBytes + kQs - 4, 4);
      u = _mm512_or_si512(u, _mm512_maskz_mov_epi8(__mmask64(h0) | __mmask64(h1) << 32, _mm512_set1_epi8(0x10)));
    }
    const __m128 dm = halves_ps<HasMin>(p, kBytes, two);  // d0 d1 (m0 m1)
    const __m128 c = HasMin ? _mm_movehl_ps(dm, dm) : _mm_mul_ps(dm, _mm_set1_ps(-float(Offset)));
    return {u, 0, dm, c};
  }
  template <class Policy>
  static __m512i dot(const BlockPair& b, __m512i xq) { return Policy::dot(b.u, xq); }
};

// IQ4_NL: Q4_0's nibbles as indices into the signed codebook, then as Q8_0.
struct IQ4NLFormat512 : Q8_0Format512 {
  static constexpr int kBytes = sizeof(BlockIQ4_NL);
  static BlockPair load(const uint8_t* p, bool two) {
    const BlockPair nib = UnsignedFormat512<0, false, false>::load(p, two);  // 18-byte blocks, as Q4_0
    const __m512i q = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(load128(kIq4Values)), nib.u);
    return {_mm512_abs_epi8(q), _mm512_movepi8_mask(q), nib.d, _mm_setzero_ps()};
  }
};

// Per block: d * d_x * isum + c * s_x, where s_x = d_x * sum(q_x).
template <class Policy, class Format>
struct Block32Dot512 {
  const WeightRows& w;
  const Acts& x;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    const int64_t nb = x.blocks, cols = x.cols;
    // Lanes 0-7 take block 0's scale, 8-15 block 1's.
    const __m512i spread = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    __m512 acc[N];
    __m128 c[N];
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) {
      acc[n] = _mm512_setzero_ps();
      c[n] = _mm_setzero_ps();
    }
    // Reading a pair past a row's last block stays inside the activations'
    // padding, and meets zero weights.
    for (int64_t b = 0; b < nb; b += 2) {
      const BlockPair wp = Format::load(row + b * Format::kBytes, b + 1 < nb);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const int64_t i = (t0 + n) * nb + b;
        const __m512i isum = Format::template dot<Policy>(wp, _mm512_loadu_si512(x.q + (t0 + n) * cols + 32 * b));
        const __m128 dd = _mm_mul_ps(wp.d, _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x.d + i))));
        const __m512 scale = _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(dd));
        acc[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), scale, acc[n]);
        if constexpr (Format::kHasC)
          c[n] = _mm_fmadd_ps(wp.c, _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x.s + i))), c[n]);
      }
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) {
      __m128 s = _mm_add_ps(c[n], _mm_movehl_ps(c[n], c[n]));
      s = _mm_add_ss(s, _mm_movehdup_ps(s));
      out[n] = _mm512_reduce_add_ps(acc[n]) + _mm_cvtss_f32(s);
    }
  }
};

template <class Dot>
void kernel512(const WeightRows& w, const Acts& x, int64_t n, int64_t r0, int64_t r1, float* y) {
  run_rows<kTokenTile512>(Dot{w, x}, w, n, r0, r1, y);
}

template <class Policy>
RowsKernel kernels_512(DType type) {
  switch (type) {
    case DType::F32: return kernel512<FloatDot512<F32Format512>>;
    case DType::F16: return kernel512<FloatDot512<F16Format512>>;
    case DType::BF16: return kernel512<FloatDot512<BF16Format512>>;
    case DType::Q8_0: return kernel512<Block32Dot512<Policy, Q8_0Format512>>;
    case DType::Q4_0: return kernel512<Block32Dot512<Policy, UnsignedFormat512<8, false, false>>>;
    case DType::Q4_1: return kernel512<Block32Dot512<Policy, UnsignedFormat512<0, true, false>>>;
    case DType::Q5_0: return kernel512<Block32Dot512<Policy, UnsignedFormat512<16, false, true>>>;
    case DType::Q5_1: return kernel512<Block32Dot512<Policy, UnsignedFormat512<0, true, true>>>;
    case DType::Q4_K: return kernel512<Q45KDot512<Policy, false>>;
    case DType::Q5_K: return kernel512<Q45KDot512<Policy, true>>;
    case DType::Q6_K: return kernel512<Q6KDot512<Policy>>;
    case DType::Q2_K: return kernel512<Q23KDot512<Policy, false>>;
    case DType::Q3_K: return kernel512<Q23KDot512<Policy, true>>;
    case DType::IQ4_NL: return kernel512<Block32Dot512<Policy, IQ4NLFormat512>>;
    case DType::IQ4_XS:
      if constexpr (Policy::kExactU8) return kernel512<IQ4XSOffsetDot512<Policy>>;
      return kernel512<IQ4XSDot512<Policy>>;
  }
  return nullptr;
}

}  // namespace
}  // namespace parley
