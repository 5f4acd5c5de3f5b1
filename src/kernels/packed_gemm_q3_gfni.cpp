// Q3_K's blocks for the packed VNNI tiles (packed_gemm_vnni.h), with GFNI:
// one vgf2p8affineqb picks a step's three bits out of every byte (layout in
// packed_gemm.cpp, pack_q3_super). A block's two sub-blocks are summed apart
// (each sum fits 16 bits: 16 x 4 x 127), put side by side in each row's
// 32-bit lane and multiplied by the row's two sub-block scales in one
// vpmaddwd, then d. Against the 2-bit lines with shifts and a mask of third
// bits, and a vpmulld per sub-block: docs/performance.md, "Q3_K".
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/packed_gemm_vnni.h"

namespace parley {
namespace {

// The gf2p8affine matrix moving input bits a, b, c of every byte to bits 0,
// 1, 2 and clearing the rest (c < 0: bit 2 cleared too).
constexpr int64_t pick_bits(int a, int b, int c) {
  return int64_t(uint64_t(1u << a) << 56 | uint64_t(1u << b) << 48 | (c < 0 ? 0 : uint64_t(1u << c) << 40));
}

struct Q3Weights {
  static __m512i get(const uint8_t* quants, int s) {
    if (s < 6) {
      const int a = 3 * (s % 2);
      return _mm512_gf2p8affine_epi64_epi8(_mm512_load_si512(quants + s / 2 * 64),
                                           _mm512_set1_epi64(pick_bits(a, a + 1, a + 2)), 0);
    }
    const __m512i low = _mm512_gf2p8affine_epi64_epi8(_mm512_load_si512(quants + (s - 6) * 64),
                                                      _mm512_set1_epi64(pick_bits(6, 7, -1)), 0);
    const __m512i third = _mm512_gf2p8affine_epi64_epi8(_mm512_load_si512(quants + 128),
                                                        _mm512_set1_epi64(int64_t(uint64_t(1u << s) << 40)), 0);
    return _mm512_or_si512(low, third);
  }
};

struct Q3Blocks {
  static constexpr bool kReadAhead = true;
  // Inlined into every tile: a call a block takes the accumulators through memory.
  template <int RG, int NT>
  [[gnu::always_inline]] static void add(const PackedMatrix& w, const PackedActs& x,
                                         const uint8_t* const (&group)[RG], int64_t b, int64_t t0,
                                         __m512 (&acc)[RG][NT]) {
    __m512i first[RG][NT], second[RG][NT];
    start_sums<RG, NT>(w.offset(), x.sum16, 2 * w.blocks, 2 * b, t0, first);
    add_steps<Q3Weights, RG, NT, 0, 4>(w, x, group, b, t0, first);
    start_sums<RG, NT>(w.offset(), x.sum16, 2 * w.blocks, 2 * b + 1, t0, second);
    add_steps<Q3Weights, RG, NT, 4, 8>(w, x, group, b, t0, second);
    __m512 dw[RG];
#pragma GCC unroll 16
    for (int i = 0; i < RG; ++i) {
      // Words 2r and 2r + 1: row r's sub-block scales.
      const __m512i scales =
          _mm512_cvtepi8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(group[i] + w.scale_offset(b))));
      dw[i] = fp16_scales(group[i] + w.super_offset(b));
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        const __m512i pair = _mm512_mask_blend_epi16(0xaaaaaaaa, first[i][t], _mm512_slli_epi32(second[i][t], 16));
        first[i][t] = _mm512_madd_epi16(pair, scales);
      }
    }
    rescale<RG, NT>(x, w.blocks, b, t0, dw, first, acc);
  }
};

}  // namespace

void packed_tiles_q3_gfni(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1,
                          float* y) {
  groups_range<Q3Blocks>(w, x, n_tokens, g0, g1, y);
}

}  // namespace parley
