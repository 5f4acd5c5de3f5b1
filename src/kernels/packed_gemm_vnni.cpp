// The packed Q8_0 / Q4_0 / IQ4_XS / Q3_K GEMM on AVX512-VNNI: a tile of RG
// groups (16 rows each) x NT tokens is accumulated in registers over the
// whole row, so each weight vector loaded feeds NT vpdpbusd and each
// activation broadcast feeds RG. Per block and (group, token): 8 vpdpbusd,
// then one conversion, one multiply of the two scales and one FMA (Q3_K:
// two int32 multiplies by its sub-block scales first).
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/blocks.h"
#include "kernels/packed_gemm_kernels.h"

namespace parley {
namespace {

// RG x NT: 3 x 4 int32 + 3 x 4 float accumulators, 3 weight vectors and a
// broadcast fit the 32 registers. On Zen 5, 3 x 4 ran 2-14% faster than 2 x 6
// in every shape measured (bench_matmul, docs/performance.md).
constexpr int kMaxGroups = 3;
constexpr int kMaxTokens = 4;

// get(): the 16 rows' unsigned values of elements 4s .. 4s+3 of a block
// (s < 8) at `quants`; scale(): the rows' fp16 scales of block b of the group
// at `group` as floats; start(): the offset correction of token t.
inline __m512 fp16_scales(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
}
struct Q8Weights {
  static __m512i get(const uint8_t* quants, int s) { return _mm512_load_si512(quants + s * 64); }
};
struct Q4Weights {  // low nibbles are elements 0-15, high nibbles 16-31
  static __m512i get(const uint8_t* quants, int s) {
    const __m512i bytes = _mm512_load_si512(quants + (s % 4) * 64);
    return _mm512_and_si512(s < 4 ? bytes : _mm512_srli_epi16(bytes, 4), _mm512_set1_epi8(0x0f));
  }
};
struct IQ4Weights {  // Q4_0's nibbles, looked up in the codebook + 128
  static __m512i get(const uint8_t* quants, int s) {
    const __m512i codebook =
        _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kIq4Values))),
                         _mm512_set1_epi8(char(0x80)));
    return _mm512_shuffle_epi8(codebook, Q4Weights::get(quants, s));
  }
};
struct Q3Weights {  // 2-bit lines 0 and 1, third bits in line 2 (packed_gemm.cpp)
  static __m512i get(const uint8_t* quants, int s) {
    const __m512i low =
        _mm512_and_si512(_mm512_srli_epi16(_mm512_load_si512(quants + (s / 4) * 64), 2 * (s % 4)), _mm512_set1_epi8(3));
    const __mmask64 high = _mm512_test_epi8_mask(_mm512_load_si512(quants + 128), _mm512_set1_epi8(char(1 << s)));
    return _mm512_mask_add_epi8(low, high, low, _mm512_set1_epi8(4));
  }
};

// The 16 rows' int8 scales at p, as int32.
inline __m512i int8_scales(const uint8_t* p) {
  return _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
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

// Q3_K's sub-block p of block b: its sums times the rows' int8 scales, into total.
template <int RG, int NT, int P>
inline void add_q3_sub_block(const PackedMatrix& w, const PackedActs& x, const uint8_t* const (&group)[RG], int64_t b,
                             int64_t t0, __m512i (&total)[RG][NT]) {
  __m512i isum[RG][NT];
  start_sums<RG, NT>(w.offset(), x.sum16, 2 * w.blocks, 2 * b + P, t0, isum);
  add_steps<Q3Weights, RG, NT, 4 * P, 4 * P + 4>(w, x, group, b, t0, isum);
#pragma GCC unroll 16
  for (int i = 0; i < RG; ++i) {
    const __m512i sc = int8_scales(group[i] + w.scale_offset(b) + 16 * P);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const __m512i scaled = _mm512_mullo_epi32(isum[i][t], sc);
      total[i][t] = P == 0 ? scaled : _mm512_add_epi32(total[i][t], scaled);
    }
  }
}

// Block b of a tile added to acc: Q8_0 and Q4_0 with their fp16 scales;
// IQ4_XS with d times its int8 block scale (exact in fp32); Q3_K's two
// sub-blocks summed apart, times their int8 scales in int32, then d.
template <class Weights, int RG, int NT>
inline void add_block(const PackedMatrix& w, const PackedActs& x, const uint8_t* const (&group)[RG], int64_t b,
                      int64_t t0, __m512 (&acc)[RG][NT]) {
  __m512i isum[RG][NT];
  __m512 dw[RG];
  if constexpr (std::is_same_v<Weights, Q3Weights>) {
    add_q3_sub_block<RG, NT, 0>(w, x, group, b, t0, isum);
    add_q3_sub_block<RG, NT, 1>(w, x, group, b, t0, isum);
  } else {
    start_sums<RG, NT>(w.offset(), x.sum, w.blocks, b, t0, isum);
    add_steps<Weights, RG, NT, 0, 8>(w, x, group, b, t0, isum);
  }
#pragma GCC unroll 16
  for (int i = 0; i < RG; ++i) {
    if constexpr (std::is_same_v<Weights, Q8Weights> || std::is_same_v<Weights, Q4Weights>) {
      dw[i] = fp16_scales(group[i] + w.scale_offset(b));
    } else {
      dw[i] = fp16_scales(group[i] + w.super_offset(b));
      if constexpr (std::is_same_v<Weights, IQ4Weights>)
        dw[i] = _mm512_mul_ps(dw[i], _mm512_cvtepi32_ps(int8_scales(group[i] + w.scale_offset(b))));
    }
  }
  rescale<RG, NT>(x, w.blocks, b, t0, dw, isum, acc);
}

// Groups g, g + stride, ... g + (RG - 1) * stride.
template <class Weights, int RG, int NT>
void tile(const PackedMatrix& w, const PackedActs& x, int64_t g, int64_t stride, int64_t t0, float* y) {
  __m512 acc[RG][NT];
  const uint8_t* group[RG];
#pragma GCC unroll 16
  for (int i = 0; i < RG; ++i) {
    group[i] = w.group(g + i * stride);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) acc[i][t] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < w.blocks; ++b) add_block<Weights, RG, NT>(w, x, group, b, t0, acc);
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
    switch (w.format) {
      case PackedFormat::kQ8: return groups_range<Q8Weights>(w, xb, n, g0, g1, yb);
      case PackedFormat::kQ4: return groups_range<Q4Weights>(w, xb, n, g0, g1, yb);
      case PackedFormat::kIQ4: return groups_range<IQ4Weights>(w, xb, n, g0, g1, yb);
      case PackedFormat::kQ3: return groups_range<Q3Weights>(w, xb, n, g0, g1, yb);
    }
  });
}

}  // namespace parley
