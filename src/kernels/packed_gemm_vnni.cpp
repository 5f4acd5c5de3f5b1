// The packed Q8_0 / Q4_0 / IQ4_XS GEMM on AVX512-VNNI (tiles in
// packed_gemm_vnni.h; Q3_K's blocks in packed_gemm_q3_gfni.cpp). Per block
// and (group, token): 8 vpdpbusd, then one conversion, one multiply of the
// two scales and one FMA.
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <type_traits>

#include "kernels/blocks.h"
#include "kernels/packed_gemm_vnni.h"

namespace parley {
namespace {

// get(): the 16 rows' unsigned values of elements 4s .. 4s+3 of a block
// (s < 8) at `quants`.
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

// Blocks with one scale a row: Q8_0 and Q4_0 their fp16 scales; IQ4_XS d
// times its int8 block scale (exact in fp32).
template <class Weights>
struct ScaledBlocks {
  static constexpr bool kReadAhead = !std::is_same_v<Weights, Q8Weights>;
  // Inlined into every tile: a call a block takes the accumulators through memory.
  template <int RG, int NT>
  [[gnu::always_inline]] static void add(const PackedMatrix& w, const PackedActs& x,
                                         const uint8_t* const (&group)[RG], int64_t b, int64_t t0,
                                         __m512 (&acc)[RG][NT]) {
    __m512i isum[RG][NT];
    __m512 dw[RG];
    start_sums<RG, NT>(w.offset(), x.sum, w.blocks, b, t0, isum);
    add_steps<Weights, RG, NT, 0, 8>(w, x, group, b, t0, isum);
#pragma GCC unroll 16
    for (int i = 0; i < RG; ++i) {
      if constexpr (std::is_same_v<Weights, IQ4Weights>) {
        const __m128i scales = _mm_load_si128(reinterpret_cast<const __m128i*>(group[i] + w.scale_offset(b)));
        dw[i] = _mm512_mul_ps(fp16_scales(group[i] + w.super_offset(b)),
                              _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(scales)));
      } else {
        dw[i] = fp16_scales(group[i] + w.scale_offset(b));
      }
    }
    rescale<RG, NT>(x, w.blocks, b, t0, dw, isum, acc);
  }
};

}  // namespace

void packed_kernel_vnni(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1,
                        float* y) {
  constexpr int64_t kTokenBlock = 96;
  for_token_blocks(w, x, n_tokens, kTokenBlock, y, [&](const PackedActs& xb, int64_t n, float* yb) {
    switch (w.format) {
      case PackedFormat::kQ8: return groups_range<ScaledBlocks<Q8Weights>>(w, xb, n, g0, g1, yb);
      case PackedFormat::kQ4: return groups_range<ScaledBlocks<Q4Weights>>(w, xb, n, g0, g1, yb);
      case PackedFormat::kIQ4: return groups_range<ScaledBlocks<IQ4Weights>>(w, xb, n, g0, g1, yb);
      case PackedFormat::kQ3: return packed_tiles_q3_gfni(w, xb, n, g0, g1, yb);
    }
  });
}

}  // namespace parley
