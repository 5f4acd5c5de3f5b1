// The packed Q8_0 / Q4_0 GEMM on AMX tiles (prefill and batched decode).
//
// The packed layout (packed_gemm.h) already is AMX's B-operand layout: one
// block of a 16-row group is 8 rows of 64 bytes, each holding 4 consecutive
// quants of the 16 weight rows. So per 32-element block, one tdpbsud
// multiplies a tile of up to 16 tokens' signed activation quants (A: tokens x
// 32 bytes, read in place from the row-major activations) by the group's
// unsigned weights (B) into tokens x 16 rows of int32 (C).
//
// Q8_0 scales every block of 32, so C cannot accumulate across blocks: each
// block's C tile is stored and rescaled by AVX-512 into float accumulators
// held in registers, which also cancels the weights' offset: acc += dw * (C *
// dx - offset * dx * sum(q)), one conversion and two FMAs per token. That
// rescaling must overlap the tile work, so every tile is double buffered
// (block b + 1's loads need not wait for block b's product, tiles not being
// renamed) and block b is rescaled while block b + 1 multiplies. Measured
// against alternatives on this project's machine (docs/performance.md): two
// groups per pass sharing the A tile, and float accumulators in memory, were
// both slower. Q4_0 nibbles are widened to bytes (0..15, offset 8) for a
// group ahead of its blocks, since tiles load bytes only.
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "kernels/amx_tiles.h"
#include "kernels/packed_gemm_kernels.h"

namespace parley {
namespace {

constexpr int kTile = 16;               // tokens of an A and a C tile
constexpr int64_t kBlockBytes = 16 * 32;  // one block of a group: 8 B-tile rows of 64 bytes
// Block pairs a group's stream is prefetched ahead: a batched decode step
// reads its weights from memory, and the tile loads alone leave the memory
// idle while the rescaling runs (measured: docs/performance.md).
constexpr int64_t kPrefetchPairs = 2;

// Tiles of parity p: A = p (m tokens x 32 bytes), B = 2 + p (8 x 64), C = 4 + p (m x 16 int32).
void configure(int m) {
  TileConfig c;
  for (int p = 0; p < 2; ++p) {
    c.set(p, m, 32);
    c.set(2 + p, 8, 64);
    c.set(4 + p, m, 64);
  }
  c.load();
}

struct alignas(64) Line {
  uint8_t bytes[64];
};

// Group g's weights as B-tile rows: block 0's address and the distance from
// block b to b + 1 for even and odd b.
struct GroupBytes {
  const uint8_t* first;
  int64_t stride[2];
};

// Per thread, reused by its next call (grow-only: no allocation per step).
struct Scratch {
  alignas(64) int32_t c[2][kTile][16];  // stored C tiles [parity][token][row]
  std::vector<float> offset_s;          // offset * d * sum(q) of a token tile [token][block]
  std::vector<Line> widened;            // the Q4_0 groups' blocks as bytes [group][block][8]
  std::vector<GroupBytes> groups;       // of the call's groups
};

// Q8_0: the packed quants in place. Q4_0: widened into `out` (blocks * 8 lines), low nibbles as
// B rows 0-3 and high nibbles as rows 4-7.
GroupBytes group_bytes(const PackedMatrix& w, int64_t g, Line* out) {
  if (w.format == PackedFormat::kQ8) return {w.quants(g, 0), {w.quant_bytes(), w.pair_bytes() - w.quant_bytes()}};
  const __m512i low = _mm512_set1_epi8(0x0f);
  for (int64_t b = 0; b < w.blocks; ++b) {
    const uint8_t* q = w.quants(g, b);
    Line* dst = out + b * 8;
    for (int j = 0; j < 4; ++j) {
      const __m512i bytes = _mm512_load_si512(q + j * 64);
      _mm512_store_si512(dst[j].bytes, _mm512_and_si512(bytes, low));
      _mm512_store_si512(dst[j + 4].bytes, _mm512_and_si512(_mm512_srli_epi16(bytes, 4), low));
    }
  }
  return {out[0].bytes, {kBlockBytes, kBlockBytes}};
}

struct Tokens {
  const PackedActs& x;
  const float* offset_s;  // of token t0
  int64_t t0;
};

// acc[t] += dw * (C[t] * dx - offset * dx * sum(q)) for block b's stored C tile.
template <int M>
inline void rescale(const PackedMatrix& w, int64_t g, const Tokens& tk, int64_t b, const int32_t (*c)[16],
                    __m512 (&acc)[M]) {
  const int64_t nb = w.blocks;
  const float* dx = tk.x.d + tk.t0 * nb + b;
  const float* os = tk.offset_s + b;
  const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(w.scales(g, b))));
#pragma GCC unroll 16
  for (int t = 0; t < M; ++t) {
    const __m512 v = _mm512_cvtepi32_ps(_mm512_load_si512(c[t]));
    acc[t] = _mm512_fmadd_ps(_mm512_fmsub_ps(v, _mm512_set1_ps(dx[t * nb]), _mm512_set1_ps(os[t * nb])), dw, acc[t]);
  }
}

// The block pair kPrefetchPairs after the one starting at `at` in a packed stream.
inline void prefetch_pair(const PackedMatrix& w, const uint8_t* at) {
  const char* p = reinterpret_cast<const char*>(at) + kPrefetchPairs * w.pair_bytes();
  for (int64_t l = 0; l < w.pair_bytes(); l += 64) _mm_prefetch(p + l, _MM_HINT_T0);
}

// Block `blk`'s product in the tiles of one parity (literal tile numbers:
// GCC's tile intrinsics paste them into the instruction's text), stored to c.
#define TILE_PRODUCT(ta, tb, tc, blk)                                  \
  _tile_loadd(ta, tk.x.q + tk.t0 * a_stride + (blk) * 32, a_stride);   \
  _tile_loadd(tb, bytes, 64);                                          \
  _tile_zero(tc);                                                      \
  _tile_dpbsud(tc, ta, tb);                                            \
  _tile_stored(tc, s.c[(blk) % 2], 64);

// Group g x the M tokens from tk.t0 into y.
template <int M>
void tile_row(const PackedMatrix& w, int64_t g, const GroupBytes& gb, const Tokens& tk, Scratch& s, float* y) {
  const int64_t nb = w.blocks, a_stride = nb * 32;
  __m512 acc[M];
#pragma GCC unroll 16
  for (int t = 0; t < M; ++t) acc[t] = _mm512_setzero_ps();
  const uint8_t* bytes = gb.first;
  const bool prefetch = w.format == PackedFormat::kQ8;  // Q4_0 reads widened bytes, already in L1
  for (int64_t b = 0; b < nb; b += 2) {
    if (prefetch) prefetch_pair(w, w.scales(g, b));  // the pair's start
    TILE_PRODUCT(0, 2, 4, b)
    if (b > 0) rescale<M>(w, g, tk, b - 1, s.c[1], acc);
    bytes += gb.stride[0];
    if (b + 1 < nb) {
      TILE_PRODUCT(1, 3, 5, b + 1)
      bytes += gb.stride[1];
    }
    rescale<M>(w, g, tk, b, s.c[0], acc);
  }
  if (nb % 2 == 0) rescale<M>(w, g, tk, nb - 1, s.c[1], acc);
  const int64_t row0 = g * 16;
  const __mmask16 lanes = w.rows - row0 >= 16 ? __mmask16(0xffff) : __mmask16((1u << (w.rows - row0)) - 1);
#pragma GCC unroll 16
  for (int t = 0; t < M; ++t) _mm512_mask_storeu_ps(y + (tk.t0 + t) * w.rows + row0, lanes, acc[t]);
}
#undef TILE_PRODUCT

// tile_row<m> for a run-time m <= M.
template <int M>
void tile_row_of(int m, const PackedMatrix& w, int64_t g, const GroupBytes& gb, const Tokens& tk, Scratch& s,
                 float* y) {
  if constexpr (M > 0) {
    if (m == M) tile_row<M>(w, g, gb, tk, s, y);
    else tile_row_of<M - 1>(m, w, g, gb, tk, s, y);
  }
}

}  // namespace

// Token tiles outer, the groups inner: a tile's activations stay in L1 while
// the groups' weights stream from L2 (each B tile is 8 sequential lines).
// Q4_0 groups are widened once per call, or, for a single token tile (batched
// decode), each just before its use, so the bytes stay in L1.
void packed_kernel_amx(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1,
                       float* y) {
  thread_local Scratch scratch;
  const bool q4 = w.format == PackedFormat::kQ4, one_tile = n_tokens <= kTile;
  const int64_t lines = (one_tile ? 1 : g1 - g0) * w.blocks * 8;
  if (q4 && scratch.widened.size() < size_t(lines)) scratch.widened.resize(size_t(lines));
  const auto bytes_of = [&](int64_t g) {
    return group_bytes(w, g, q4 ? scratch.widened.data() + (one_tile ? 0 : (g - g0) * w.blocks * 8) : nullptr);
  };
  std::vector<GroupBytes>& groups = scratch.groups;
  groups.clear();
  if (!one_tile)
    for (int64_t g = g0; g < g1; ++g) groups.push_back(bytes_of(g));
  if (scratch.offset_s.size() < size_t(kTile * w.blocks)) scratch.offset_s.resize(size_t(kTile * w.blocks));
  int configured = 0;
  for (int64_t t = 0; t < n_tokens; t += kTile) {
    const int m = int(std::min<int64_t>(kTile, n_tokens - t));
    for (int64_t i = 0; i < m * w.blocks; ++i) scratch.offset_s[size_t(i)] = float(w.offset()) * x.s[t * w.blocks + i];
    if (m != configured) configure(configured = m);
    const Tokens tk{x, scratch.offset_s.data(), t};
    for (int64_t g = g0; g < g1; ++g)
      tile_row_of<kTile>(m, w, g, one_tile ? bytes_of(g) : groups[size_t(g - g0)], tk, scratch, y);
  }
  _tile_release();
}

}  // namespace parley
