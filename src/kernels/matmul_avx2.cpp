// AVX2 kernels for the float types and the 32-element block types; the K
// types are in matmul_k_avx2.cpp.
#include "kernels/blocks.h"
#include "kernels/matmul_kernels.h"
#include "kernels/simd_avx2.h"
#include "kernels/tile.h"

namespace parley {
namespace {

constexpr int kTokenTile = 4;

struct F32Format {
  static constexpr int kBytes = 4;
  static __m256 load8(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
  static float load1(const uint8_t* p) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
};
struct F16Format {
  static constexpr int kBytes = 2;
  static __m256 load8(const uint8_t* p) { return _mm256_cvtph_ps(load128(p)); }
  static float load1(const uint8_t* p) { return half_to_float(p); }
};
struct BF16Format {
  static constexpr int kBytes = 2;
  static __m256 load8(const uint8_t* p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(p)), 16));
  }
  static float load1(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    const uint32_t bits = uint32_t(h) << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
};

// Every row's sum runs in one order, 8 columns at a time, whatever the rows
// and tokens around it: a token's result must not depend on the batch it is
// in (a sequence decoded alone and in a batch gives the same tokens).
template <class Format>
struct FloatDot {
  static constexpr int B = Format::kBytes;
  const WeightRows& w;
  const Acts& x;

  // Rows per pass: one chain of FMAs per row and token, so decode (one
  // token) takes 8 rows to keep the FMA units busy; a tile of tokens shares
  // each activation load between 2 rows within the registers.
  template <int N>
  static constexpr int rows_per_pass = N == 1 ? 8 : 2;

  template <int N, int R>
  void dot_rows(const uint8_t* const* rows, int64_t t0, float* const* out) const {
    const int64_t cols = x.cols;
    const float* xt = x.f + t0 * cols;
    __m256 acc[R][N];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) acc[r][n] = _mm256_setzero_ps();
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      __m256 wv[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) wv[r] = Format::load8(rows[r] + c * B);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const __m256 xv = _mm256_loadu_ps(xt + n * cols + c);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) acc[r][n] = _mm256_fmadd_ps(wv[r], xv, acc[r][n]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) out[r][n] = hsum(acc[r][n]);
      add_tail<N>(rows[r], c, xt, out[r]);
    }
  }

  // Columns c .. cols-1, fewer than 8.
  template <int N>
  void add_tail(const uint8_t* row, int64_t c, const float* xt, float* out) const {
    for (; c < x.cols; ++c) {
      const float v = Format::load1(row + c * B);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) out[n] += v * xt[n * x.cols + c];
    }
  }
};

// A loaded 32-element block: integer quants ready for dot_u8s8 against the
// activations, and per-block floats. The block's dot with activation block
// (d_x, s_x = d_x * sum(q_x)) is d * d_x * isum + c * s_x.
struct Block {
  __m256i u;     // unsigned quants (or |q| for signed ones)
  __m256i sign;  // signed quants (Q8_0 only), whose signs move onto the activations
  float d;
  float c;
};

struct Q8_0Format {
  static constexpr int kBytes = sizeof(BlockQ8_0);
  static constexpr bool kHasC = false;
  static Block load(const uint8_t* p) {
    const __m256i q = load256(p + 2);
    return {_mm256_abs_epi8(q), q, half_to_float(p), 0.0f};
  }
  static __m256i dot(const Block& b, __m256i xq) {
    return dot_u8s8(b.u, _mm256_sign_epi8(xq, b.sign));
  }
};

// IQ4_NL: Q4_0's nibbles as indices into the signed codebook, then as Q8_0.
struct IQ4NLFormat : Q8_0Format {
  static constexpr int kBytes = sizeof(BlockIQ4_NL);
  static Block load(const uint8_t* p) {
    const __m256i q = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(load128(kIq4Values)), unpack_nibbles(p + 2));
    return {_mm256_abs_epi8(q), q, half_to_float(p), 0.0f};
  }
};

// Q4_0 / Q4_1 / Q5_0 / Q5_1: unsigned 4- or 5-bit quants; the format's offset
// (-8 / -16) or min m becomes the c term: sum((q - o) * x) = sum(q * x) - o * sum(x).
template <int Offset, bool HasMin, bool HasHigh>
struct UnsignedFormat {
  static constexpr int kBytes = 2 + (HasMin ? 2 : 0) + (HasHigh ? 4 : 0) + 16;
  static constexpr bool kHasC = true;
  static Block load(const uint8_t* p) {
    const float d = half_to_float(p);
    const float c = HasMin ? half_to_float(p + 2) : -float(Offset) * d;
    const uint8_t* qh = p + (HasMin ? 4 : 2);
    __m256i u = unpack_nibbles(qh + (HasHigh ? 4 : 0));
    if constexpr (HasHigh) u = _mm256_or_si256(u, bits_to_0x10(qh));
    return {u, u, d, c};
  }
  static __m256i dot(const Block& b, __m256i xq) { return dot_u8s8(b.u, xq); }
};
using Q4_0Format = UnsignedFormat<8, false, false>;
using Q4_1Format = UnsignedFormat<0, true, false>;
using Q5_0Format = UnsignedFormat<16, false, true>;
using Q5_1Format = UnsignedFormat<0, true, true>;
static_assert(Q4_0Format::kBytes == sizeof(BlockQ4_0) && Q4_1Format::kBytes == sizeof(BlockQ4_1));
static_assert(Q5_0Format::kBytes == sizeof(BlockQ5_0) && Q5_1Format::kBytes == sizeof(BlockQ5_1));

template <class Format>
struct Block32Dot {
  const WeightRows& w;
  const Acts& x;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    const int64_t nb = x.blocks, cols = x.cols;
    const int8_t* xq = x.q + t0 * cols;
    const float* xd = x.d + t0 * nb;
    const float* xs = x.s + t0 * nb;
    __m256 acc[N];
    float c[N];
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) {
      acc[n] = _mm256_setzero_ps();
      c[n] = 0.0f;
    }
    for (int64_t b = 0; b < nb; ++b) {
      const Block wb = Format::load(row + b * Format::kBytes);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const __m256i isum = Format::dot(wb, load256(xq + n * cols + b * 32));
        const __m256 scale = _mm256_set1_ps(wb.d * xd[n * nb + b]);
        acc[n] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), scale, acc[n]);
        if constexpr (Format::kHasC) c[n] += wb.c * xs[n * nb + b];
      }
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = hsum(acc[n]) + c[n];
  }
};

template <class Dot>
void kernel(const WeightRows& w, const Acts& x, int64_t n, int64_t r0, int64_t r1, float* y) {
  run_rows<kTokenTile>(Dot{w, x}, w, n, r0, r1, y);
}

}  // namespace

RowsKernel avx2_kernel(DType type) {
  switch (type) {
    case DType::F32: return kernel<FloatDot<F32Format>>;
    case DType::F16: return kernel<FloatDot<F16Format>>;
    case DType::BF16: return kernel<FloatDot<BF16Format>>;
    case DType::Q8_0: return kernel<Block32Dot<Q8_0Format>>;
    case DType::Q4_0: return kernel<Block32Dot<Q4_0Format>>;
    case DType::Q4_1: return kernel<Block32Dot<Q4_1Format>>;
    case DType::Q5_0: return kernel<Block32Dot<Q5_0Format>>;
    case DType::Q5_1: return kernel<Block32Dot<Q5_1Format>>;
    case DType::IQ4_NL: return kernel<Block32Dot<IQ4NLFormat>>;
    default: return avx2_k_kernel(type);
  }
}

}  // namespace parley
