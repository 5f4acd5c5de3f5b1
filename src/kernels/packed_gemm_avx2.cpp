// The packed Q8_0 / Q4_0 / IQ4_XS GEMM on AVX2 (no int8 dot-product
// instruction): the same layout as the VNNI kernel, read as two 32-byte
// halves per 64-byte line, each 8 rows x 4 quants. A tile of HALVES 8-row halves x NT tokens is
// accumulated in registers over the whole row, so each weight vector loaded
// feeds NT products and each activation broadcast feeds HALVES.
//
// vpmaddubsw multiplies unsigned by signed bytes and adds pairs into int16
// with saturation, so the operands must keep a pair's sum within 32767:
// - Q4_0's values are 0..15: 2 * 15 * 127 fits eight times over, so a whole
//   block's products add up in int16 (one vpmaddwd to int32 per block).
// - Q8_0's stored q + 128 would overflow; the signed quant q = u ^ 0x80 is
//   split as |q| (unsigned, at most 128) and its sign, moved onto the
//   activations (vpsignb): 2 * 128 * 127 fits once, so every product is
//   widened to int32 at once, and no offset needs cancelling.
// - IQ4_XS's codebook values are looked up signed and taken as Q8_0's.
// Q3_K is packed only where VNNI runs it: its 3-bit unpacking on AVX2 made
// batch-1 decode slower than the row kernel (matmul_k_low_avx2.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/packed_gemm_kernels.h"
#include "kernels/read_ahead.h"

namespace parley {
namespace {

// A tile is one group (its two halves) x up to 4 tokens: 8 integer sums, the
// weight vectors and a broadcast stay in the 16 ymm registers; the 8 float
// accumulators, touched once per block, may spill. 4 tokens beat 3 (all sums
// and accumulators in registers) on the Zen 3 guest: batched decode +4-16%,
// 512-token prefill +3-7%, 128-token prefill within noise
// (docs/performance.md); the weight work of a line (load, offset, |q|) is
// shared by more products.
constexpr int kMaxHalves = 2;
constexpr int kMaxTokens = 4;

inline __m256i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

inline __m256i ones16() { return _mm256_set1_epi16(1); }

// One block's integer sums of HALVES x NT (half h: rows 8h..8h+7 of the group),
// zeroed by the caller.
template <int HALVES, int NT>
using Sums = __m256i[HALVES][NT];

// The quants of half h of a tile at tile row `line` (64-byte lines).
inline const uint8_t* half_quants(const PackedMatrix& w, int64_t g, int64_t b, int h, int line) {
  return w.quants(g, b) + line * 64 + h * 32;
}

inline __m256i load_line(const uint8_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }

// The fp16 scales of half h (8 rows) at p.
inline __m256 fp16_scales(const uint8_t* p, int h) {
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(p + h * 16)));
}

// Adds the products of the signed quants q with the broadcast activations xb
// (|q| <= 128) to isum, widened to int32.
inline __m256i add_signed_products(__m256i isum, __m256i q, __m256i mag, __m256i xb) {
  return _mm256_add_epi32(isum, _mm256_madd_epi16(_mm256_maddubs_epi16(mag, _mm256_sign_epi8(xb, q)), ones16()));
}

struct BlockScales {  // Q8_0 and Q4_0: one fp16 scale per row and block
  static __m256 scale(const PackedMatrix& w, int64_t g, int64_t b, int h) { return fp16_scales(w.scales(g, b), h); }
};

struct Q8Block : BlockScales {
  static constexpr bool kReadAhead = false;
  template <int HALVES, int NT>
  [[gnu::always_inline]] static void sums(const PackedMatrix& w, const PackedActs& x, int64_t g, int64_t b,
                                          int64_t t0, Sums<HALVES, NT>& isum) {
    const int64_t nb = w.blocks;
    const int8_t* xq = x.q + (t0 * nb + b) * 32;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      __m256i q[HALVES], mag[HALVES];
#pragma GCC unroll 8
      for (int h = 0; h < HALVES; ++h) {
        q[h] = _mm256_xor_si256(load_line(half_quants(w, g, b, h, j)), _mm256_set1_epi8(char(0x80)));
        mag[h] = _mm256_abs_epi8(q[h]);
      }
#pragma GCC unroll 8
      for (int t = 0; t < NT; ++t) {
        const __m256i xb = broadcast4(xq + t * nb * 32 + j * 4);
#pragma GCC unroll 8
        for (int h = 0; h < HALVES; ++h) isum[h][t] = add_signed_products(isum[h][t], q[h], mag[h], xb);
      }
    }
  }
};

struct Q4Block : BlockScales {  // line j holds elements 4j.. in its low nibbles and 16+4j.. in its high ones
  static constexpr bool kReadAhead = true;
  template <int HALVES, int NT>
  [[gnu::always_inline]] static void sums(const PackedMatrix& w, const PackedActs& x, int64_t g, int64_t b,
                                          int64_t t0, Sums<HALVES, NT>& isum) {
    const int64_t nb = w.blocks;
    __m256i acc16[HALVES][NT] = {};
    const int8_t* xq = x.q + (t0 * nb + b) * 32;
    const __m256i low = _mm256_set1_epi8(0x0f);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m256i lo[HALVES], hi[HALVES];
#pragma GCC unroll 8
      for (int h = 0; h < HALVES; ++h) {
        const __m256i bytes = load_line(half_quants(w, g, b, h, j));
        lo[h] = _mm256_and_si256(bytes, low);
        hi[h] = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low);
      }
#pragma GCC unroll 8
      for (int t = 0; t < NT; ++t) {
        const __m256i xlo = broadcast4(xq + t * nb * 32 + j * 4);
        const __m256i xhi = broadcast4(xq + t * nb * 32 + 16 + j * 4);
#pragma GCC unroll 8
        for (int h = 0; h < HALVES; ++h)
          acc16[h][t] = _mm256_add_epi16(acc16[h][t], _mm256_add_epi16(_mm256_maddubs_epi16(lo[h], xlo),
                                                                       _mm256_maddubs_epi16(hi[h], xhi)));
      }
    }
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t) {
      const __m256i offset = _mm256_set1_epi32(-8 * x.sum[(t0 + t) * nb + b]);
#pragma GCC unroll 8
      for (int h = 0; h < HALVES; ++h) isum[h][t] = _mm256_add_epi32(_mm256_madd_epi16(acc16[h][t], ones16()), offset);
    }
  }
};

// Q4_0's lines of codebook indices; the fp16 d of the super-block times the
// block's int8 scale.
struct IQ4Block {
  static constexpr bool kReadAhead = false;
  template <int HALVES, int NT>
  [[gnu::always_inline]] static void sums(const PackedMatrix& w, const PackedActs& x, int64_t g, int64_t b,
                                          int64_t t0, Sums<HALVES, NT>& isum) {
    const int64_t nb = w.blocks;
    const int8_t* xq = x.q + (t0 * nb + b) * 32;
    const __m256i low = _mm256_set1_epi8(0x0f);
    const __m256i codebook = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(kIq4Values)));
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m256i lo[HALVES], hi[HALVES], lo_mag[HALVES], hi_mag[HALVES];
#pragma GCC unroll 8
      for (int h = 0; h < HALVES; ++h) {
        const __m256i bytes = load_line(half_quants(w, g, b, h, j));
        lo[h] = _mm256_shuffle_epi8(codebook, _mm256_and_si256(bytes, low));
        hi[h] = _mm256_shuffle_epi8(codebook, _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low));
        lo_mag[h] = _mm256_abs_epi8(lo[h]);
        hi_mag[h] = _mm256_abs_epi8(hi[h]);
      }
#pragma GCC unroll 8
      for (int t = 0; t < NT; ++t) {
        const __m256i xlo = broadcast4(xq + t * nb * 32 + j * 4);
        const __m256i xhi = broadcast4(xq + t * nb * 32 + 16 + j * 4);
#pragma GCC unroll 8
        for (int h = 0; h < HALVES; ++h) {
          isum[h][t] = add_signed_products(isum[h][t], lo[h], lo_mag[h], xlo);
          isum[h][t] = add_signed_products(isum[h][t], hi[h], hi_mag[h], xhi);
        }
      }
    }
  }
  static __m256 scale(const PackedMatrix& w, int64_t g, int64_t b, int h) {
    const __m128i block = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w.scales(g, b) + h * 8));
    return _mm256_mul_ps(fp16_scales(w.super_scales(g, b), h), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(block)));
  }
};

// Stores the first `rows` (1..8) floats of v at y.
inline void store_rows(float* y, __m256 v, int64_t rows) {
  if (rows >= 8) return _mm256_storeu_ps(y, v);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  _mm256_maskstore_ps(y, _mm256_cmpgt_epi32(_mm256_set1_epi32(int(rows)), lane), v);
}

// Ahead: requesting the group's weights ahead (read_ahead.h) while it multiplies.
template <class Block, int HALVES, int NT, bool Ahead>
void tile(const PackedMatrix& w, const PackedActs& x, int64_t g, int64_t t0, float* y) {
  const int64_t nb = w.blocks;
  __m256 acc[HALVES][NT] = {};
  const uint8_t* const stream[1] = {w.group(g)};
  ReadAhead<1, Ahead> ahead(w, stream);
  for (int64_t b = 0; b < nb; ++b) {
    ahead.request(b);
    Sums<HALVES, NT> isum = {};
    Block::template sums<HALVES, NT>(w, x, g, b, t0, isum);
#pragma GCC unroll 8
    for (int h = 0; h < HALVES; ++h) {
      const __m256 dw = Block::scale(w, g, b, h);
#pragma GCC unroll 8
      for (int t = 0; t < NT; ++t) {
        const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(x.d[(t0 + t) * nb + b]));
        acc[h][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[h][t]), scale, acc[h][t]);
      }
    }
  }
#pragma GCC unroll 8
  for (int h = 0; h < HALVES; ++h) {
    const int64_t row0 = g * 16 + h * 8;
    if (row0 >= w.rows) break;
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t) store_rows(y + (t0 + t) * w.rows + row0, acc[h][t], w.rows - row0);
  }
}

// One group (both halves) for every token, a tile of tokens at a time.
template <class Block>
void group(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g, float* y) {
  for_token_tiles<kMaxTokens>(n_tokens, [&]<int NT>(int64_t t0) {
    if constexpr (Block::kReadAhead)
      if (t0 == 0) return tile<Block, kMaxHalves, NT, true>(w, x, g, t0, y);
    tile<Block, kMaxHalves, NT, false>(w, x, g, t0, y);
  });
}

}  // namespace

void packed_kernel_avx2(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1,
                        float* y) {
  constexpr int64_t kTokenBlock = 64;
  for_token_blocks(w, x, n_tokens, kTokenBlock, y, [&](const PackedActs& xb, int64_t n, float* yb) {
    for (int64_t g = g0; g < g1; ++g) {
      if (w.format == PackedFormat::kQ8) group<Q8Block>(w, xb, n, g, yb);
      else if (w.format == PackedFormat::kQ4) group<Q4Block>(w, xb, n, g, yb);
      else group<IQ4Block>(w, xb, n, g, yb);
    }
  });
}

}  // namespace parley
