#pragma once
// The register tiles of the packed int8 GEMM on AVX512-VNNI, shared by the
// files compiled for it (packed_gemm_vnni.cpp; packed_gemm_q3_gfni.cpp, which
// adds GFNI): a tile of RG groups (16 rows each) x NT tokens is accumulated
// in registers over the whole row, so each weight vector loaded feeds NT
// vpdpbusd and each activation broadcast feeds RG. A Blocks type adds one
// block of a tile (Blocks::add<RG, NT>) and says whether its tiles request
// their weights ahead (Blocks::kReadAhead); a Weights type gives a step's 16
// rows x 4 unsigned values (Weights::get).
// Everything here has internal linkage: each including file is compiled with
// its own target flags, and one copy must not stand in for another's.
#include <immintrin.h>

#include <cstring>

#include "kernels/packed_gemm_kernels.h"
#include "kernels/read_ahead.h"

namespace parley {
namespace {

// RG x NT: 3 x 4 int32 + 3 x 4 float accumulators, 3 weight vectors and a
// broadcast fit the 32 registers. On Zen 5, 3 x 4 ran 2-14% faster than 2 x 6
// in every shape measured (bench_matmul, docs/performance.md).
constexpr int kMaxGroups = 3;
constexpr int kMaxTokens = 4;

// The rows' fp16 scales at p as floats.
inline __m512 fp16_scales(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
}

inline __m512i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Steps S0 .. S1 - 1 (elements 4 * S0 .. 4 * S1 - 1) of block b of a tile:
// their products added to isum.
template <class Weights, int RG, int NT, int S0, int S1>
inline void add_steps(const PackedMatrix& w, const PackedActs& x, const uint8_t* const (&group)[RG], int64_t b,
                      int64_t t0, __m512i (&isum)[RG][NT]) {
  const int64_t nb = w.blocks, quants = w.quant_offset(b);
  const int8_t* xq = x.q + (t0 * nb + b) * 32;
#pragma GCC unroll 8
  for (int j = S0; j < S1; ++j) {
    __m512i wv[RG];
#pragma GCC unroll 16
    for (int i = 0; i < RG; ++i) wv[i] = Weights::get(group[i] + quants, j);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const __m512i xb = broadcast4(xq + t * nb * 32 + j * 4);
#pragma GCC unroll 16
      for (int i = 0; i < RG; ++i) isum[i][t] = _mm512_dpbusd_epi32(isum[i][t], wv[i], xb);
    }
  }
}

// Every token's sums started at -offset times its activations' sum k (of
// `per_token` a token: one per block, or per 16 elements).
template <int RG, int NT, class Sum>
inline void start_sums(int32_t offset, const Sum* sums, int64_t per_token, int64_t k, int64_t t0,
                       __m512i (&isum)[RG][NT]) {
#pragma GCC unroll 16
  for (int t = 0; t < NT; ++t) {
    const __m512i start = _mm512_set1_epi32(-offset * int32_t(sums[(t0 + t) * per_token + k]));
#pragma GCC unroll 16
    for (int i = 0; i < RG; ++i) isum[i][t] = start;
  }
}

// acc += isum * dw[i] * the activations' scale of block b.
template <int RG, int NT>
inline void rescale(const PackedActs& x, int64_t nb, int64_t b, int64_t t0, const __m512 (&dw)[RG],
                    const __m512i (&isum)[RG][NT], __m512 (&acc)[RG][NT]) {
#pragma GCC unroll 16
  for (int t = 0; t < NT; ++t) {
    const __m512 dx = _mm512_set1_ps(x.d[(t0 + t) * nb + b]);
#pragma GCC unroll 16
    for (int i = 0; i < RG; ++i)
      acc[i][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[i][t]), _mm512_mul_ps(dw[i], dx), acc[i][t]);
  }
}

// Groups g, g + stride, ... g + (RG - 1) * stride; Ahead: requesting the
// weights ahead (ReadAhead) while it multiplies.
template <class Blocks, int RG, int NT, bool Ahead>
void tile(const PackedMatrix& w, const PackedActs& x, int64_t g, int64_t stride, int64_t t0, float* y) {
  __m512 acc[RG][NT];
  const uint8_t* group[RG];
#pragma GCC unroll 16
  for (int i = 0; i < RG; ++i) {
    group[i] = w.group(g + i * stride);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) acc[i][t] = _mm512_setzero_ps();
  }
  ReadAhead<RG, Ahead> ahead(w, group);
  for (int64_t b = 0; b < w.blocks; ++b) {
    ahead.request(b);
    Blocks::template add<RG, NT>(w, x, group, b, t0, acc);
  }
#pragma GCC unroll 16
  for (int i = 0; i < RG; ++i) {
    const int64_t row0 = (g + i * stride) * 16;
    const __mmask16 lanes = w.rows - row0 >= 16 ? __mmask16(0xffff) : __mmask16((1u << (w.rows - row0)) - 1);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * w.rows + row0, lanes, acc[i][t]);
  }
}

template <class Blocks, int RG>
void groups(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g, float* y, int64_t stride = 1) {
  for_token_tiles<kMaxTokens>(n_tokens, [&]<int NT>(int64_t t0) {
    if constexpr (Blocks::kReadAhead && RG == kMaxGroups)
      if (t0 == 0) return tile<Blocks, RG, NT, true>(w, x, g, stride, t0, y);
    tile<Blocks, RG, NT, false>(w, x, g, stride, t0, y);
  });
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
template <class Blocks, int RG>
void side_by_side(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1, float* y) {
  const int64_t part = (g1 - g0) / RG;
  for (int64_t g = g0; g < g0 + part; ++g) groups<Blocks, RG>(w, x, n_tokens, g, y, part);
  int64_t g = g0 + RG * part;  // fewer than RG groups left
  if (RG > 2 && g + 2 == g1) return groups<Blocks, 2>(w, x, n_tokens, g, y);
  for (; g < g1; ++g) groups<Blocks, 1>(w, x, n_tokens, g, y);
}

// Decode (one or two tokens) is bound by memory: two streams, in tiles of
// two groups. Longer runs take the full 3-group tiles.
template <class Blocks>
void groups_range(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1, float* y) {
  if (n_tokens <= 2) side_by_side<Blocks, 2>(w, x, n_tokens, g0, g1, y);
  else side_by_side<Blocks, kMaxGroups>(w, x, n_tokens, g0, g1, y);
}

}  // namespace
}  // namespace parley
