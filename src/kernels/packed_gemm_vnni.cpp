// The packed Q8_0 / Q4_0 GEMM on AVX512-VNNI: a tile of RG groups (16 rows
// each) x NT tokens is accumulated in registers over the whole row, so each
// weight vector loaded feeds NT vpdpbusd and each activation broadcast feeds
// RG. Per block and (group, token): 8 vpdpbusd, then one conversion, one
// multiply of the two scales and one FMA.
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/packed_gemm_kernels.h"

namespace parley {
namespace {

// RG x NT: 3 x 4 int32 + 3 x 4 float accumulators, 3 weight vectors and a
// broadcast fit the 32 registers. On Zen 5, 3 x 4 ran 2-14% faster than 2 x 6
// in every shape measured (bench_matmul, docs/performance.md).
constexpr int kMaxGroups = 3;
constexpr int kMaxTokens = 4;

// The 16 rows' unsigned values of elements 4s .. 4s+3 of a block (s < 8).
struct Q8Weights {
  static __m512i get(const uint8_t* quants, int s) { return _mm512_load_si512(quants + s * 64); }
};
struct Q4Weights {  // low nibbles are elements 0-15, high nibbles 16-31
  static __m512i get(const uint8_t* quants, int s) {
    const __m512i bytes = _mm512_load_si512(quants + (s % 4) * 64);
    return _mm512_and_si512(s < 4 ? bytes : _mm512_srli_epi16(bytes, 4), _mm512_set1_epi8(0x0f));
  }
};

inline __m512i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Groups g, g + stride, ... g + (RG - 1) * stride.
template <class Weights, int RG, int NT>
void tile(const PackedMatrix& w, const PackedActs& x, int64_t g, int64_t stride, int64_t t0, float* y) {
  const int64_t nb = w.blocks;
  __m512 acc[RG][NT];
#pragma GCC unroll 16
  for (int i = 0; i < RG; ++i)
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) acc[i][t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m512i isum[RG][NT];
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const __m512i start = _mm512_set1_epi32(-w.offset() * x.sum[(t0 + t) * nb + b]);
#pragma GCC unroll 16
      for (int i = 0; i < RG; ++i) isum[i][t] = start;
    }
    const int8_t* xq = x.q + (t0 * nb + b) * 32;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      __m512i wv[RG];
#pragma GCC unroll 16
      for (int i = 0; i < RG; ++i) wv[i] = Weights::get(w.quants(g + i * stride, b), j);
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        const __m512i xb = broadcast4(xq + t * nb * 32 + j * 4);
#pragma GCC unroll 16
        for (int i = 0; i < RG; ++i) isum[i][t] = _mm512_dpbusd_epi32(isum[i][t], wv[i], xb);
      }
    }
    __m512 dw[RG];
#pragma GCC unroll 16
    for (int i = 0; i < RG; ++i)
      dw[i] = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(w.scales(g + i * stride, b))));
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const __m512 dx = _mm512_set1_ps(x.d[(t0 + t) * nb + b]);
#pragma GCC unroll 16
      for (int i = 0; i < RG; ++i)
        acc[i][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[i][t]), _mm512_mul_ps(dw[i], dx), acc[i][t]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < RG; ++i) {
    const int64_t row0 = (g + i * stride) * 16;
    const __mmask16 lanes = w.rows - row0 >= 16 ? __mmask16(0xffff) : __mmask16((1u << (w.rows - row0)) - 1);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * w.rows + row0, lanes, acc[i][t]);
  }
}

template <class Weights, int RG>
void groups(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g, float* y, int64_t stride = 1) {
  for_token_tiles<kMaxTokens>(n_tokens, [&]<int NT>(int64_t t0) { tile<Weights, RG, NT>(w, x, g, stride, t0, y); });
}

// Tiles of RG groups taken side by side from RG equal parts of [g0, g1)
// (g, g + part, ...), then the groups left over. Each part is one sequential
// run of weights, so a tile's first token tile, which waits for its weights
// from memory, reads RG streams at once; its later token tiles find them in
// L2. On the Zen 5 guest, against RG consecutive groups (one stream; one
// process alternating, 65536x1536 matrices): Q8_0 decode 59-82 -> 65-89 GB/s
// (RG 2; three or four streams read less), 4 tokens 2.23 -> 1.78 ms, 8 tokens
// 2.60 -> 2.17, 16 tokens 3.95 -> 3.53, 64 tokens 10.65 -> 10.30; Q4_0
// 4 tokens 1.76 -> 0.85 ms (docs/performance.md).
template <class Weights, int RG>
void side_by_side(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1, float* y) {
  const int64_t part = (g1 - g0) / RG;
  for (int64_t g = g0; g < g0 + part; ++g) groups<Weights, RG>(w, x, n_tokens, g, y, part);
  int64_t g = g0 + RG * part;  // fewer than RG groups left
  if (RG > 2 && g + 2 == g1) return groups<Weights, 2>(w, x, n_tokens, g, y);
  for (; g < g1; ++g) groups<Weights, 1>(w, x, n_tokens, g, y);
}

// Decode (one or two tokens) is bound by memory: two streams, in tiles of
// two groups. Longer runs take the full 3-group tiles.
template <class Weights>
void groups_range(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1, float* y) {
  if (n_tokens <= 2) side_by_side<Weights, 2>(w, x, n_tokens, g0, g1, y);
  else side_by_side<Weights, kMaxGroups>(w, x, n_tokens, g0, g1, y);
}

}  // namespace

void packed_kernel_vnni(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1,
                        float* y) {
  constexpr int64_t kTokenBlock = 96;
  for_token_blocks(w, x, n_tokens, kTokenBlock, y, [&](const PackedActs& xb, int64_t n, float* yb) {
    if (w.format == PackedFormat::kQ8) groups_range<Q8Weights>(w, xb, n, g0, g1, yb);
    else groups_range<Q4Weights>(w, xb, n, g0, g1, yb);
  });
}

}  // namespace parley
