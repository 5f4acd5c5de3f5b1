// BF16 weights on CPUs with AVX512-BF16: vdpbf16ps multiplies pairs of bf16
// values and adds them into fp32 lanes, 32 products per instruction. The
// activations are rounded to bf16 once per call (as oneDNN does for bf16
// weights): 8 significant bits instead of 24, so a dot product may differ
// from the fp32 paths by about 2^-9 of sum |w * x|.
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <vector>

#include "kernels/matmul_kernels.h"
#include "kernels/tile.h"

namespace parley {
namespace {

constexpr int kTokenTileBf16 = 8;

// Activations as bf16 pairs, each token's row padded with zeros to 32.
struct Bf16Acts {
  std::vector<uint16_t> v;
  int64_t stride = 0;  // elements per token
};

const Bf16Acts& to_bf16(const Acts& x, int64_t n_tokens) {
  thread_local Bf16Acts a;
  a.stride = (x.cols + 31) / 32 * 32;
  a.v.assign(size_t(a.stride * n_tokens), 0);
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t c = 0; c < x.cols; c += 16) {
      const __mmask16 m = x.cols - c >= 16 ? __mmask16(0xffff) : __mmask16((1u << (x.cols - c)) - 1);
      const __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, x.f + t * x.cols + c));
      _mm256_mask_storeu_epi16(a.v.data() + t * a.stride + c, m, __m256i(h));
    }
  return a;
}

struct Bf16Dot {
  const WeightRows& w;
  const Bf16Acts& x;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    const auto* wr = reinterpret_cast<const uint16_t*>(row);
    const uint16_t* xt = x.v.data() + t0 * x.stride;
    __m512 acc[N];
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) acc[n] = _mm512_setzero_ps();
    for (int64_t c = 0; c < w.cols; c += 32) {  // lanes past the row load as zero
      const __mmask32 m = w.cols - c >= 32 ? __mmask32(0xffffffff) : __mmask32((1ull << (w.cols - c)) - 1);
      const __m512bh wv = __m512bh(_mm512_maskz_loadu_epi16(m, wr + c));
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n)
        acc[n] = _mm512_dpbf16_ps(acc[n], wv, __m512bh(_mm512_loadu_si512(xt + n * x.stride + c)));
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = _mm512_reduce_add_ps(acc[n]);
  }
};

void bf16_rows(const WeightRows& w, const Acts& x, int64_t n_tokens, int64_t r0, int64_t r1, float* y) {
  run_rows<kTokenTileBf16>(Bf16Dot{w, to_bf16(x, n_tokens)}, w, n_tokens, r0, r1, y);
}

}  // namespace

RowsKernel bf16_kernel(DType type) { return type == DType::BF16 ? bf16_rows : nullptr; }

}  // namespace parley
