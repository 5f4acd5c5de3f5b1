// AVX-512 ops: the LoRA expansion 16 columns a vector. A column tail runs
// through the same tiles with masked loads and stores (masked-off lanes load
// as zero and are not written), so every element takes the same arithmetic.
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/ops_avx512.h"

#include <immintrin.h>

#include <algorithm>

#include "kernels/token_tiles.h"

namespace parley::avx512 {
namespace {

struct F32Rows {
  const float* x;
  __m512 load(int64_t i, __mmask16 m) const { return _mm512_maskz_loadu_ps(m, x + i); }
};
struct F16Rows {
  const uint16_t* x;
  __m512 load(int64_t i, __mmask16 m) const { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + i)); }
};

// R output rows by W vectors from column i (the last vector's lanes `last`):
// each load of x feeds R rows, and R * W accumulator chains keep both FMA
// units busy through their latency. The sum over k runs in order.
template <int R, int W, class Rows>
void tile(float* const* y, const float* const* a, Rows x, int64_t rows, int64_t stride, int64_t i, __mmask16 last) {
  __m512 acc[R][W];
  const auto mask = [last](int w) { return w == W - 1 ? last : __mmask16(0xffff); };
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) acc[r][w] = _mm512_maskz_loadu_ps(mask(w), y[r] + i + 16 * w);
  for (int64_t k = 0; k < rows; ++k) {
    __m512 xv[W];
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) xv[w] = x.load(k * stride + i + 16 * w, mask(w));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 va = _mm512_set1_ps(a[r][k]);
#pragma GCC unroll 8
      for (int w = 0; w < W; ++w) acc[r][w] = _mm512_fmadd_ps(va, xv[w], acc[r][w]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) _mm512_mask_storeu_ps(y[r] + i + 16 * w, mask(w), acc[r][w]);
}

// The n columns of R rows: whole tiles of W vectors, then single vectors,
// the last one masked.
template <int R, int W, class Rows>
void rows_span(float* const* y, const float* const* a, Rows x, int64_t rows, int64_t stride, int64_t n) {
  int64_t i = 0;
  for (; i + 16 * W <= n; i += 16 * W) tile<R, W>(y, a, x, rows, stride, i, __mmask16(0xffff));
  for (; i < n; i += 16) {
    const int64_t left = std::min<int64_t>(n - i, 16);
    tile<R, 1>(y, a, x, rows, stride, i, __mmask16((1u << left) - 1));
  }
}

// Four rows at a time over their whole length: the output rows stream in
// order (they are a projection's outputs, mostly out of cache, and a pass by
// column blocks across many rows ran slower), and Bᵀ's rows come from L2.
// One row alone takes 8 vectors, to keep 8 chains in flight.
template <class Rows>
void axpy_rows_of(float* const* y, const float* const* a, int64_t m, Rows x, int64_t rows, int64_t stride,
                  int64_t n) {
  for_token_tiles<4>(m, [&]<int R>(int64_t t) { rows_span<R, R == 1 ? 8 : 4>(y + t, a + t, x, rows, stride, n); });
}

}  // namespace

void axpy_rows(float* const* y, const float* const* a, int64_t m, const float* x, int64_t rows, int64_t stride,
               int64_t n) {
  axpy_rows_of(y, a, m, F32Rows{x}, rows, stride, n);
}

void axpy_rows_f16(float* const* y, const float* const* a, int64_t m, const uint16_t* x, int64_t rows, int64_t stride,
                   int64_t n) {
  axpy_rows_of(y, a, m, F16Rows{x}, rows, stride, n);
}

}  // namespace parley::avx512
