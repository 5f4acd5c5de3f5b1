// The packed Q8_0 / Q4_0 GEMM on AMX bf16 tiles, for long runs of tokens
// (prefill, big mixed batches).
//
// The int8 tile kernel (packed_gemm_amx.cpp) must store and rescale every
// 32-element block's C tile, because each block has its own weight and
// activation scales; that AVX-512 work, not the tiles, bounds it. Here the
// scales are applied before the product instead: each group's weights are
// dequantized once per call into bf16 B tiles (q * d rounded to bf16), the
// activations are rounded to bf16, and C accumulates in fp32 across the whole
// row, so a C tile is stored once per row instead of once per block. The
// dequantization costs a few AVX-512 operations per weight, which a call
// repays over its token tiles: hence "long runs" (packed_gemm.cpp sets the
// threshold). Rounding both operands to bf16 (8 significant bits) differs
// from the int8 path by up to about 2^-7 of sum |w * x| per output.
//
// Tiles: C 0-3 hold (token tile i, group j) as tile 2i + j, A 4-5 two token
// tiles of 16 x 32 bf16, B 6-7 one block of two groups (16 k-pairs x 16 rows
// x 2 bf16). Each block: four tile loads and four tdpbf16ps.
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/amx_tiles.h"
#include "kernels/packed_gemm_kernels.h"

namespace parley {
namespace {

constexpr int kTile = 16;

// One block of one group as a B tile: [k pair 0..15][row 0..15][2] bf16.
struct alignas(64) BTile {
  uint16_t v[16][32];
};

// vpermb indices taking a packed line (row r's quants k0..k3 at bytes 4r..4r+3)
// to four 16-byte lanes: (k0, k1) of rows 0-7, of rows 8-15, then (k2, k3) of both.
__m512i line_order() {
  alignas(64) uint8_t idx[64];
  for (int i = 0; i < 64; ++i) {
    const int lane = i / 16, j = i % 16;
    idx[i] = uint8_t((j / 2 + lane % 2 * 8) * 4 + j % 2 + lane / 2 * 2);
  }
  return _mm512_load_si512(idx);
}

// The 16 rows' scales, each repeated for a pair: rows 0-7 and rows 8-15.
struct PairScales {
  __m512 lo, hi;
};
PairScales pair_scales(const uint8_t* fp16) {
  const __m512 d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(fp16)));
  const __m512i lo = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  return {_mm512_permutexvar_ps(lo, d), _mm512_permutexvar_ps(_mm512_add_epi32(lo, _mm512_set1_epi32(8)), d)};
}

inline __m512 scaled(__m128i q, __m512 s) { return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), s); }

// Signed quants k0..k3 of 16 rows (one packed line) into B rows (k0, k1) and (k2, k3).
inline void dequant_line(__m512i q, __m512i order, const PairScales& s, uint16_t* row01, uint16_t* row23) {
  const __m512i p = _mm512_permutexvar_epi8(order, q);
  const __m512 f0 = scaled(_mm512_castsi512_si128(p), s.lo), f1 = scaled(_mm512_extracti32x4_epi32(p, 1), s.hi);
  const __m512 f2 = scaled(_mm512_extracti32x4_epi32(p, 2), s.lo), f3 = scaled(_mm512_extracti32x4_epi32(p, 3), s.hi);
  _mm512_store_si512(row01, __m512i(_mm512_cvtne2ps_pbh(f1, f0)));
  _mm512_store_si512(row23, __m512i(_mm512_cvtne2ps_pbh(f3, f2)));
}

// Group g's blocks [b0, b1) as B tiles (rows past the matrix have zero
// scales: zero weights).
// The same blocks of group g + 1 are prefetched meanwhile (prefill reads
// the weights from memory, a slab of a group at a time).
void dequant_group(const PackedMatrix& w, int64_t g, int64_t b0, int64_t b1, __m512i order, BTile* out) {
  for (int64_t b = b0; b < b1; ++b) {
    const uint8_t* q = w.quants(g, b);
    if (b % 2 == 0)
      for (int64_t l = 0; l < w.pair_bytes(); l += 64)
        _mm_prefetch(reinterpret_cast<const char*>(w.scales(g, b) + w.group_stride() + l), _MM_HINT_T0);
    const PairScales s = pair_scales(w.scales(g, b));
    BTile& t = out[b - b0];
    if (w.format == PackedFormat::kQ8) {
      for (int j = 0; j < 8; ++j) {
        const __m512i v = _mm512_xor_si512(_mm512_load_si512(q + j * 64), _mm512_set1_epi8(char(0x80)));
        dequant_line(v, order, s, t.v[2 * j], t.v[2 * j + 1]);
      }
    } else {  // line j: low nibbles are elements 4j.., high nibbles 16 + 4j..
      const __m512i low = _mm512_set1_epi8(0x0f), eight = _mm512_set1_epi8(8);
      for (int j = 0; j < 4; ++j) {
        const __m512i bytes = _mm512_load_si512(q + j * 64);
        const __m512i lo = _mm512_sub_epi8(_mm512_and_si512(bytes, low), eight);
        const __m512i hi = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(bytes, 4), low), eight);
        dequant_line(lo, order, s, t.v[2 * j], t.v[2 * j + 1]);
        dequant_line(hi, order, s, t.v[2 * j + 8], t.v[2 * j + 9]);
      }
    }
  }
}

// One C tile: 16 tokens x 16 rows of fp32 sums.
struct alignas(64) CTile {
  float v[kTile][kTile];
};

// The operands of one pass: A tiles of two token tiles, B tiles of one or
// two groups, each from the same block on; C tiles (token tile i, group j) at
// c[i * c_stride + j].
struct Pass {
  const BTile* a;  // token tile i's tiles; token tile i + 1 follows a_next later
  int64_t a_next;
  const BTile* b0;
  const BTile* b1;
  CTile* c;
  int64_t c_stride;
};

// Tokens of two tiles x groups (b0, and b1 when Two) over `blocks` blocks,
// added to the C tiles (or into zeroed ones when `first`). Tile numbers are
// pasted into the instruction's text, hence literal numbers throughout.
template <bool Two>
void tile_pass(const Pass& p, int64_t blocks, bool first) {
  CTile* c0 = p.c;
  CTile* c1 = p.c + p.c_stride;
  if (first) {
    _tile_zero(0);
    _tile_zero(2);
    if (Two) {
      _tile_zero(1);
      _tile_zero(3);
    }
  } else {
    _tile_loadd(0, c0[0].v, 64);
    _tile_loadd(2, c1[0].v, 64);
    if (Two) {
      _tile_loadd(1, c0[1].v, 64);
      _tile_loadd(3, c1[1].v, 64);
    }
  }
  // Each tile is loaded just before its first use, so that the next block's
  // loads wait only for the product that last read their tile (tiles are not
  // renamed) and overlap the remaining ones.
  for (int64_t b = 0; b < blocks; ++b) {
    _tile_loadd(4, p.a[b].v, 64);
    _tile_loadd(6, p.b0[b].v, 64);
    _tile_dpbf16ps(0, 4, 6);
    if (Two) {
      _tile_loadd(7, p.b1[b].v, 64);
      _tile_dpbf16ps(1, 4, 7);
    }
    _tile_loadd(5, p.a[p.a_next + b].v, 64);
    _tile_dpbf16ps(2, 5, 6);
    if (Two) _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c0[0].v, 64);
  _tile_stored(2, c1[0].v, 64);
  if (Two) {
    _tile_stored(1, c0[1].v, 64);
    _tile_stored(3, c1[1].v, 64);
  }
}

// C tiles [token tile][group] of groups from g0 into y.
void store_sums(const CTile* c, int64_t n_groups, int64_t g0, int64_t rows, int64_t n_tokens, float* y) {
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t j = 0; j < n_groups; ++j) {
      const int64_t row0 = (g0 + j) * kTile;
      const __mmask16 lanes = rows - row0 >= kTile ? __mmask16(0xffff) : __mmask16((1u << (rows - row0)) - 1);
      _mm512_mask_storeu_ps(y + t * rows + row0, lanes, _mm512_load_ps(c[t / kTile * n_groups + j].v[t % kTile]));
    }
}

// Cache blocking (as in BLAS): chunks of kChunkGroups groups, then slabs of
// kKBlocks weight blocks (dequantized into 256 KB of B tiles), then blocks of
// kBlockTokens tokens, group pairs, token tile pairs. A token block's A
// tiles (256 KB) and the slab stay in L2, a group pair's B tiles (32 KB) in
// L1 while the token tiles pass them; C tiles go to memory once per slab.
constexpr int64_t kChunkGroups = 16, kKBlocks = 16, kBlockTokens = 256;

}  // namespace

Bf16Rows bf16_rows_amx(const float* x, int64_t cols, int64_t n_tokens, ThreadPool& pool) {
  thread_local std::vector<BTile> buffer;  // the same 1 KB shape as a B tile
  const int64_t blocks = cols / 32, pairs = (n_tokens + 2 * kTile - 1) / (2 * kTile);
  if (buffer.size() < size_t(pairs * 2 * blocks)) buffer.resize(size_t(pairs * 2 * blocks));
  BTile* tiles = buffer.data();
  pool.parallel_for(pairs * 2, [&](int64_t i0, int64_t i1) {  // token tiles
    for (int64_t i = i0; i < i1; ++i)
      for (int r = 0; r < kTile; ++r) {
        const int64_t t = i * kTile + r;
        for (int64_t b = 0; b < blocks; ++b) {
          uint16_t* dst = tiles[i * blocks + b].v[r];
          if (t >= n_tokens) {
            std::memset(dst, 0, 64);
            continue;
          }
          const float* src = x + t * cols + b * 32;
          const __m512bh h = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(src + 16), _mm512_loadu_ps(src));
          _mm512_store_si512(dst, __m512i(h));
        }
      }
  });
  return {tiles[0].v[0], blocks};
}

void packed_kernel_amx_bf16(const PackedMatrix& w, const Bf16Rows& x, int64_t n_tokens, int64_t g0, int64_t g1,
                            float* y) {
  thread_local std::vector<BTile> slab;  // [group][block] of a chunk and slab
  thread_local std::vector<CTile> sums;  // [token tile][group] of a chunk
  const int64_t nb = w.blocks, token_tiles = (n_tokens + 2 * kTile - 1) / (2 * kTile) * 2;
  slab.resize(size_t(kChunkGroups * kKBlocks));
  if (sums.size() < size_t(token_tiles * kChunkGroups)) sums.resize(size_t(token_tiles * kChunkGroups));
  const __m512i order = line_order();
  const BTile* a = reinterpret_cast<const BTile*>(x.v);
  configure_full_tiles();
  for (int64_t gc = g0; gc < g1; gc += kChunkGroups) {
    const int64_t ng = std::min(kChunkGroups, g1 - gc);
    for (int64_t k0 = 0; k0 < nb; k0 += kKBlocks) {
      const int64_t kn = std::min(kKBlocks, nb - k0);
      for (int64_t j = 0; j < ng; ++j) dequant_group(w, gc + j, k0, k0 + kn, order, slab.data() + j * kn);
      for (int64_t t0 = 0; t0 < token_tiles; t0 += kBlockTokens / kTile)
        for (int64_t j = 0; j < ng; j += 2) {
          const BTile* b0 = slab.data() + j * kn;
          for (int64_t i = t0; i < std::min(token_tiles, t0 + kBlockTokens / kTile); i += 2) {
            const Pass p{a + i * nb + k0, nb, b0, b0 + kn, sums.data() + i * ng + j, ng};
            if (j + 1 < ng) tile_pass<true>(p, kn, k0 == 0);
            else tile_pass<false>(p, kn, k0 == 0);
          }
        }
    }
    store_sums(sums.data(), ng, gc, w.rows, n_tokens, y);
  }
  _tile_release();
}

}  // namespace parley
