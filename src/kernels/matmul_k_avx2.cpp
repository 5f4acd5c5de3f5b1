// AVX2 kernels for the K types. Per super-block and token the integer sums
// sum_j sc[j] * sum(q * x over sub-block j) stay in int32 lanes; one float FMA
// applies d * d_x. Quants are unpacked unsigned, so maddubs needs no sign
// trick; Q6_K's -32 offset is taken off through the activations' 16-sums.
#include "kernels/blocks.h"
#include "kernels/matmul_kernels.h"
#include "kernels/simd_avx2.h"
#include "kernels/tile.h"

namespace parley {
namespace {

constexpr int kTokenTile = 4;

// acc + per-lane sums of (u * x) scaled by the int16 scales s.
inline __m256i add_scaled(__m256i acc, __m256i u, const int8_t* x, __m256i s) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, load256(x)), s));
}

// int16 lanes all equal to lane j of the int16 vector v (in both halves).
inline __m256i broadcast_lane(__m256i v, int j) {
  return _mm256_shuffle_epi8(v, _mm256_set1_epi16(int16_t((2 * j + 1) << 8 | 2 * j)));
}

template <bool HasHigh>
struct Q45KDot {
  static constexpr int kBytes = HasHigh ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
  const WeightRows& w;
  const Acts& x;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    const int64_t nb = x.blocks, cols = x.cols;
    const __m256i low4 = _mm256_set1_epi8(0x0f), bit0 = _mm256_set1_epi8(1);
    __m256 acc[N];
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) acc[n] = _mm256_setzero_ps();
    for (int64_t sb = 0; sb < nb; ++sb) {
      const uint8_t* p = row + sb * kBytes;  // d, dmin, scales[12], (qh[32]), qs[128]
      uint64_t sc, m;
      unpack_k_scales(p + 4, sc, m);
      const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(sc))));
      const uint8_t* qs = p + 16 + (HasHigh ? 32 : 0);
      __m256i high = HasHigh ? load256(p + 16) : _mm256_setzero_si256();
      __m256i isum[N];
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) isum[n] = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {  // 64 elements: sub-blocks 2c (low nibbles), 2c+1 (high)
        const __m256i raw = load256(qs + 32 * c);
        __m256i lo = _mm256_and_si256(raw, low4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
        if constexpr (HasHigh) {  // bits 2c and 2c+1 of qh[l] become bit 4
          lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(high, bit0), 4));
          hi = _mm256_or_si256(
              hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 1), bit0), 4));
          high = _mm256_srli_epi16(high, 2);
        }
        const __m256i s_lo = broadcast_lane(sc16, 2 * c), s_hi = broadcast_lane(sc16, 2 * c + 1);
#pragma GCC unroll 8
        for (int n = 0; n < N; ++n) {
          const int8_t* xq = x.q + (t0 + n) * cols + sb * 256 + 64 * c;
          isum[n] = add_scaled(add_scaled(isum[n], lo, xq, s_lo), hi, xq + 32, s_hi);
        }
      }
      const __m256i mins = pairs_epi16(m);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const int64_t i = (t0 + n) * nb + sb;
        __m256 d, dmin;
        scale_pair(p, x.d[i], d, dmin);
        const __m256i msum = _mm256_madd_epi16(load256(x.bsums + i * 16), mins);  // m[j] * 16-sums
        acc[n] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[n]), d, acc[n]);
        acc[n] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum), dmin, acc[n]);
      }
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = hsum(acc[n]);
  }
};

struct Q6KDot {
  const WeightRows& w;
  const Acts& x;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    const int64_t nb = x.blocks, cols = x.cols;
    const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
    __m256 acc[N];
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) acc[n] = _mm256_setzero_ps();
    for (int64_t sb = 0; sb < nb; ++sb) {
      const uint8_t* p = row + sb * int64_t(sizeof(BlockQ6_K));  // ql[128], qh[64], scales[16], d
      const __m256i sc16 = _mm256_cvtepi8_epi16(load128(p + 192));
      __m256i isum[N];
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) isum[n] = _mm256_setzero_si256();
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        // The half's eight scales, int16, in both 128-bit lanes.
        const __m256i sc_h = h == 0 ? _mm256_permute2x128_si256(sc16, sc16, 0x00)
                                    : _mm256_permute2x128_si256(sc16, sc16, 0x11);
        const __m256i a = load256(p + 64 * h), b = load256(p + 64 * h + 32);
        const __m256i qh = load256(p + 128 + 32 * h);
        // Quants of elements 128h + 32k + l, k = 0..3 (see BlockQ6_K).
        const __m256i q[4] = {
            _mm256_or_si256(_mm256_and_si256(a, low4),
                            _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45)),
            _mm256_or_si256(_mm256_and_si256(b, low4),
                            _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), low4),
                            _mm256_and_si256(qh, bits45)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 4), low4),
                            _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45)),
        };
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
          // Scales of sub-blocks 8h+2k (int16 lanes 0-7) and 8h+2k+1 (lanes 8-15).
          const int16_t lo = int16_t((4 * k + 1) << 8 | 4 * k), hi = int16_t((4 * k + 3) << 8 | (4 * k + 2));
          const __m256i s = _mm256_shuffle_epi8(sc_h, _mm256_set_m128i(_mm_set1_epi16(hi), _mm_set1_epi16(lo)));
#pragma GCC unroll 8
          for (int n = 0; n < N; ++n)
            isum[n] = add_scaled(isum[n], q[k], x.q + (t0 + n) * cols + sb * 256 + 128 * h + 32 * k, s);
        }
      }
      const float d = half_to_float(p + 208);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const int64_t i = (t0 + n) * nb + sb;
        const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(load256(x.bsums + i * 16), sc16), 5);
        const __m256i total = _mm256_sub_epi32(isum[n], offset);  // the quants' -32
        acc[n] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(total), _mm256_set1_ps(d * x.d[i]), acc[n]);
      }
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = hsum(acc[n]);
  }
};

template <class Dot>
void kernel(const WeightRows& w, const Acts& x, int64_t n, int64_t r0, int64_t r1, float* y) {
  run_rows<kTokenTile>(Dot{w, x}, w, n, r0, r1, y);
}

}  // namespace

RowsKernel avx2_k_kernel(DType type) {
  switch (type) {
    case DType::Q4_K: return kernel<Q45KDot<false>>;
    case DType::Q5_K: return kernel<Q45KDot<true>>;
    case DType::Q6_K: return kernel<Q6KDot>;
    default: return avx2_k_low_kernel(type);
  }
}

}  // namespace parley
