// AVX2 kernels for Q2_K, Q3_K and IQ4_XS, in the manner of matmul_k_avx2.cpp:
// per super-block and token the scaled integer sums stay in int32 lanes and
// one float FMA applies d * d_x. Q2_K / Q3_K quants are unpacked unsigned
// (Q3_K's -4 comes off through the activations' 16-sums); IQ4_XS's codebook
// values are signed, so their signs move onto the activations.
#include "kernels/blocks.h"
#include "kernels/matmul_kernels.h"
#include "kernels/simd_avx2.h"
#include "kernels/tile.h"

namespace parley {
namespace {

constexpr int kTokenTile = 4;

inline __m256i add_scaled16(__m256i acc, __m256i u, __m256i x, __m256i s) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), s));
}

// Q2_K (Q3 false) or Q3_K. Vector k of half h holds elements 128h + 32k + l:
// sub-blocks 8h + 2k (128-bit lane 0) and 8h + 2k + 1 (lane 1).
template <bool Q3>
struct Q23KDot {
  static constexpr int kBytes = Q3 ? sizeof(BlockQ3_K) : sizeof(BlockQ2_K);
  const WeightRows& w;
  const Acts& x;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    const int64_t nb = x.blocks, cols = x.cols;
    const __m256i low2 = _mm256_set1_epi8(3);
    __m256 acc[N];
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) acc[n] = _mm256_setzero_ps();
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
      const uint8_t* qs = p + (Q3 ? 32 : 16);
      const __m256i hm = Q3 ? load256(p) : _mm256_setzero_si256();
      __m256i isum[N];
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) isum[n] = _mm256_setzero_si256();
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i sc_h = h == 0 ? _mm256_permute2x128_si256(sc16, sc16, 0x00)
                                    : _mm256_permute2x128_si256(sc16, sc16, 0x11);
        const __m256i raw = load256(qs + 32 * h);
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
          __m256i u = _mm256_and_si256(_mm256_srli_epi16(raw, 2 * k), low2);
          if constexpr (Q3) {  // bit b = 4h + k of hmask[l] shifted to bit 2 (no bit crosses into another byte)
            const int b = 4 * h + k;
            const __m256i high = b < 2 ? _mm256_slli_epi16(hm, 2 - b) : _mm256_srli_epi16(hm, b - 2);
            u = _mm256_or_si256(u, _mm256_and_si256(high, _mm256_set1_epi8(4)));
          }
          const int16_t lo = int16_t((4 * k + 1) << 8 | 4 * k), hi = int16_t((4 * k + 3) << 8 | (4 * k + 2));
          const __m256i s = _mm256_shuffle_epi8(sc_h, _mm256_set_m128i(_mm_set1_epi16(hi), _mm_set1_epi16(lo)));
#pragma GCC unroll 8
          for (int n = 0; n < N; ++n)
            isum[n] = add_scaled16(isum[n], u, load256(x.q + (t0 + n) * cols + sb * 256 + 128 * h + 32 * k), s);
        }
      }
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const int64_t i = (t0 + n) * nb + sb;
        const __m256i bsums = load256(x.bsums + i * 16);
        if constexpr (Q3) {
          const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(bsums, sc16), 2);  // the quants' -4
          const __m256 d = _mm256_set1_ps(half_to_float(p + 108) * x.d[i]);
          acc[n] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(isum[n], offset)), d, acc[n]);
        } else {
          __m256 d, dmin;
          scale_pair(p + 80, x.d[i], d, dmin);
          acc[n] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[n]), d, acc[n]);
          acc[n] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(bsums, m16)), dmin, acc[n]);
        }
      }
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = hsum(acc[n]);
  }
};

// IQ4_XS: a 32-byte load covers sub-blocks 2c (128-bit lane 0) and 2c + 1
// (lane 1); its low nibbles are their first 16 elements, the high nibbles the
// last 16, so the activations are shuffled to match (once for all the rows
// of a pass). Codebook values by pshufb, their signs moved onto the activations.
struct IQ4XSDot {
  const WeightRows& w;
  const Acts& x;

  // A token tile takes 2 rows a pass, which share the activations' loads and
  // shuffles (they cost more than the accumulators' spills); decode takes 1:
  // two rows read as two streams from DRAM ran slower on Zen 5.
  template <int N>
  static constexpr int rows_per_pass = N == 1 ? 1 : 2;

  template <int N, int R>
  void dot_rows(const uint8_t* const* rows, int64_t t0, float* const* out) const {
    const int64_t nb = x.blocks, cols = x.cols;
    const __m256i codebook = _mm256_broadcastsi128_si256(load128(kIq4Values));
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256 acc[R][N];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) acc[r][n] = _mm256_setzero_ps();
    for (int64_t sb = 0; sb < nb; ++sb) {
      const uint8_t* p[R];  // d, scales_h, scales_l[4], qs[128]
      __m256i sc_pairs[R];  // int32 lane j: scale j in both int16 halves, for madd
      __m256i isum[R][N];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        p[r] = rows[r] + sb * int64_t(sizeof(BlockIQ4_XS));
        const __m256i sc = iq4_xs_scales_epi32(p[r] + 2);
        sc_pairs[r] = _mm256_or_si256(_mm256_and_si256(sc, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(sc, 16));
#pragma GCC unroll 8
        for (int n = 0; n < N; ++n) isum[r][n] = _mm256_setzero_si256();
      }
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        __m256i xlo[N], xhi[N];
#pragma GCC unroll 8
        for (int n = 0; n < N; ++n) {
          const int8_t* xq = x.q + (t0 + n) * cols + sb * 256 + 64 * c;
          const __m256i x0 = load256(xq), x1 = load256(xq + 32);
          xlo[n] = _mm256_permute2x128_si256(x0, x1, 0x20);
          xhi[n] = _mm256_permute2x128_si256(x0, x1, 0x31);
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const __m256i raw = load256(p[r] + 8 + 32 * c);
          const __m256i lo = _mm256_shuffle_epi8(codebook, _mm256_and_si256(raw, low4));
          const __m256i hi = _mm256_shuffle_epi8(codebook, _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4));
          const int j = 2 * c;
          const __m256i s =
              _mm256_permutevar8x32_epi32(sc_pairs[r], _mm256_setr_epi32(j, j, j, j, j + 1, j + 1, j + 1, j + 1));
          const __m256i ulo = _mm256_abs_epi8(lo), uhi = _mm256_abs_epi8(hi);
#pragma GCC unroll 8
          for (int n = 0; n < N; ++n)
            isum[r][n] = add_scaled16(add_scaled16(isum[r][n], ulo, _mm256_sign_epi8(xlo[n], lo), s), uhi,
                                      _mm256_sign_epi8(xhi[n], hi), s);
        }
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const float d = half_to_float(p[r]);
#pragma GCC unroll 8
        for (int n = 0; n < N; ++n) {
          const __m256 scale = _mm256_set1_ps(d * x.d[(t0 + n) * nb + sb]);
          acc[r][n] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r][n]), scale, acc[r][n]);
        }
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) out[r][n] = hsum(acc[r][n]);
  }
};

template <class Dot>
void kernel(const WeightRows& w, const Acts& x, int64_t n, int64_t r0, int64_t r1, float* y) {
  run_rows<kTokenTile>(Dot{w, x}, w, n, r0, r1, y);
}

}  // namespace

RowsKernel avx2_k_low_kernel(DType type) {
  switch (type) {
    case DType::Q2_K: return kernel<Q23KDot<false>>;
    case DType::Q3_K: return kernel<Q23KDot<true>>;
    case DType::IQ4_XS: return kernel<IQ4XSDot>;
    default: return nullptr;
  }
}

}  // namespace parley
