// Prefill attention on AMX bf16 tiles (see attention_amx.h).
//
// Layouts, per call (one KV head, keys 0 .. n_keys - 1 padded with zeros to
// a multiple of 32):
//   Q rows [row m = token * group + head][head_dim] bf16, pre-multiplied by
//     the scale; an A tile is 16 rows x 32 dims.
//   K^T tiles [block of 16 keys][32 dims]: row i holds dims 2i, 2i + 1 of
//     each of the 16 keys (the B layout of S = Q K^T).
//   V tiles [block of 32 keys][16 dims]: row i holds keys 2i, 2i + 1 of each
//     of the 16 dims (the B layout of O = P V).
// Tiles: 0 A (Q, then P), 1-2 B (K^T, then V), 4-7 C (S: 4-5; P V: 4-7).
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/attention_amx.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/amx_tiles.h"
#include "kernels/cpu.h"

namespace parley {
namespace {

constexpr int kRows = 16;  // query rows of a tile
constexpr int kKeys = 32;  // keys per step

struct alignas(64) Tile {
  uint16_t v[16][32];
};

// e^x as exp8 in simd_avx2.h (the same constants), 16 lanes; -inf gives 0.
inline __m512 exp16(__m512 x) {
  const __mmask16 underflow = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_LT_OQ);
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)), _MM_FROUND_TO_NEAREST_INT);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.428606765330187e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512i scale = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mul_ps(__mmask16(~underflow), p, _mm512_castsi512_ps(scale));
}

struct Scratch {
  std::vector<Tile> kt, vt;
  std::vector<uint16_t> q;  // [row][head_dim]
  std::vector<float> row;   // K or V rows as floats
  std::vector<float> o;     // [16][head_dim] running sums of a query tile
  alignas(64) float s[kRows][kKeys];
  alignas(64) float pv[kRows][64];
  alignas(64) uint16_t p[kRows][kKeys];
  float max[kRows], sum[kRows], corr[kRows];
  int32_t limit[kRows];  // last key each row attends
};

const float* key_row(const PagedKv& kv, const uint8_t* base, int32_t slot, int32_t kv_head, int32_t hd, float* buf) {
  const uint8_t* row = base + size_t(kv.blocks[slot / kv.block_size]) * kv.block_stride +
                       size_t(slot % kv.block_size) * kv.slot_stride + size_t(kv_head) * kv.head_stride;
  if (kv.type == DType::F32) return reinterpret_cast<const float*>(row);
  kv_row_to_float(kv.type, row, buf, hd);
  return buf;
}

// Key j's dims as bf16 pairs, one dword per K^T tile row, at column j % 16.
void put_key(const float* k, int32_t j, int32_t chunks, Tile* kt) {
  // Dword offsets of the 16 tile rows (64 bytes apart).
  const __m512i rows = _mm512_set_epi32(240, 224, 208, 192, 176, 160, 144, 128, 112, 96, 80, 64, 48, 32, 16, 0);
  for (int32_t c = 0; c < chunks; ++c) {
    const __m512bh pairs = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(k + c * 32 + 16), _mm512_loadu_ps(k + c * 32));
    _mm512_i32scatter_epi32(kt[size_t(j / 16 * chunks + c)].v[0] + j % 16 * 2, rows, __m512i(pairs), 4);
  }
}

// Keys j, j + 1 (j even) interleaved per dim into V tile rows (j % 32) / 2.
void put_value_pair(const float* v0, const float* v1, int32_t j, int32_t dim_tiles, Tile* vt) {
  // Word i of a row: dim i / 2 of key j + i % 2 (key j's dims are words 0-15, key j + 1's 16-31).
  alignas(64) static constexpr uint16_t kOrder[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                                      8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i idx = _mm512_load_si512(kOrder);
  for (int32_t t = 0; t < dim_tiles; ++t) {
    const __m512bh h = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(v1 + t * 16), _mm512_loadu_ps(v0 + t * 16));
    _mm512_store_si512(vt[size_t(j / kKeys * dim_tiles + t)].v[j % kKeys / 2], _mm512_permutexvar_epi16(idx, __m512i(h)));
  }
}

void prepare_kv(const PagedKv& kv, int32_t kv_head, int32_t hd, int32_t n_keys, Scratch& s) {
  const int32_t padded = (n_keys + kKeys - 1) / kKeys * kKeys, chunks = hd / 32, dim_tiles = hd / 16;
  s.kt.assign(size_t(padded / 16 * chunks), Tile{});
  s.vt.assign(size_t(padded / kKeys * dim_tiles), Tile{});
  s.row.assign(size_t(3 * hd), 0.0f);  // two rows' buffers, then zeros (the padding key)
  float* buf0 = s.row.data();
  float* buf1 = buf0 + hd;
  for (int32_t j = 0; j < n_keys; ++j) put_key(key_row(kv, kv.k, j, kv_head, hd, buf0), j, chunks, s.kt.data());
  for (int32_t j = 0; j < n_keys; j += 2) {
    const float* v0 = key_row(kv, kv.v, j, kv_head, hd, buf0);
    const float* v1 = j + 1 < n_keys ? key_row(kv, kv.v, j + 1, kv_head, hd, buf1) : buf1 + hd;
    put_value_pair(v0, v1, j, dim_tiles, s.vt.data());
  }
}

void prepare_queries(const PrefillAttention& a, Scratch& s) {
  const int32_t hd = a.head_dim, rows = a.n_tokens * a.group, padded = (rows + kRows - 1) / kRows * kRows;
  s.q.assign(size_t(padded) * size_t(hd), 0);
  const __m512 scale = _mm512_set1_ps(a.scale);
  for (int32_t m = 0; m < rows; ++m) {
    const float* src = a.q + (m / a.group) * a.q_stride + (a.kv_head * a.group + m % a.group) * hd;
    for (int32_t d = 0; d < hd; d += 32) {
      const __m512 lo = _mm512_mul_ps(_mm512_loadu_ps(src + d), scale);
      const __m512 hi = _mm512_mul_ps(_mm512_loadu_ps(src + d + 16), scale);
      _mm512_storeu_si512(s.q.data() + size_t(m) * size_t(hd) + size_t(d), __m512i(_mm512_cvtne2ps_pbh(hi, lo)));
    }
  }
}

// Scores of keys kb * 32 .. + 31 for the tile's rows into s.s.
void scores(Scratch& s, int32_t m0, int32_t kb, int32_t hd) {
  const int32_t chunks = hd / 32;
  _tile_zero(4);
  _tile_zero(5);
  for (int32_t c = 0; c < chunks; ++c) {
    _tile_loadd(0, s.q.data() + size_t(m0) * size_t(hd) + size_t(c) * 32, hd * 2);
    _tile_loadd(1, s.kt[size_t((2 * kb) * chunks + c)].v, 64);
    _tile_dpbf16ps(4, 0, 1);
    _tile_loadd(2, s.kt[size_t((2 * kb + 1) * chunks + c)].v, 64);
    _tile_dpbf16ps(5, 0, 2);
  }
  _tile_stored(4, &s.s[0][0], kKeys * 4);
  _tile_stored(5, &s.s[0][16], kKeys * 4);
}

// The online softmax step: masks keys past each row's limit, moves the
// running max, turns the scores into bf16 weights P.
void softmax_step(Scratch& s, int32_t kb) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512 none = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int r = 0; r < kRows; ++r) {
    const __m512i lim = _mm512_set1_epi32(s.limit[r] - kb * kKeys);
    const __m512 s0 = _mm512_mask_mov_ps(none, _mm512_cmple_epi32_mask(lane, lim), _mm512_load_ps(s.s[r]));
    const __m512 s1 = _mm512_mask_mov_ps(none, _mm512_cmple_epi32_mask(_mm512_add_epi32(lane, _mm512_set1_epi32(16)), lim),
                                         _mm512_load_ps(s.s[r] + 16));
    const float top = std::max(s.max[r], _mm512_reduce_max_ps(_mm512_max_ps(s0, s1)));
    s.corr[r] = std::exp(s.max[r] - top);  // 0 while the row had no key (-inf)
    s.max[r] = top;
    const __m512 p0 = exp16(_mm512_sub_ps(s0, _mm512_set1_ps(top)));
    const __m512 p1 = exp16(_mm512_sub_ps(s1, _mm512_set1_ps(top)));
    s.sum[r] = s.sum[r] * s.corr[r] + _mm512_reduce_add_ps(_mm512_add_ps(p0, p1));
    _mm512_store_si512(s.p[r], __m512i(_mm512_cvtne2ps_pbh(p1, p0)));
  }
}

// o[r] = o[r] * corr[r] + (P V)[r] for dims d0 .. d0 + 16 * n of every row.
void add_values(Scratch& s, int32_t d0, int n, int32_t hd) {
  for (int r = 0; r < kRows; ++r) {
    float* o = s.o.data() + size_t(r) * size_t(hd) + size_t(d0);
    const __m512 c = _mm512_set1_ps(s.corr[r]);
    for (int i = 0; i < n; ++i)
      _mm512_storeu_ps(o + 16 * i, _mm512_fmadd_ps(_mm512_loadu_ps(o + 16 * i), c, _mm512_load_ps(s.pv[r] + 16 * i)));
  }
}

// P V for keys kb * 32 .. + 31, 4 dim tiles (64 dims) per pass. Tile
// numbers are pasted into the instruction's text, hence a macro.
#define PV_TILE(tc, tb, i)                                               \
  if ((i) < n) {                                                         \
    _tile_zero(tc);                                                      \
    _tile_loadd(tb, s.vt[size_t(kb * dim_tiles + dt + (i))].v, 64);      \
    _tile_dpbf16ps(tc, 0, tb);                                           \
    _tile_stored(tc, &s.pv[0][16 * (i)], 64 * 4);                        \
  }
void values(Scratch& s, int32_t kb, int32_t hd) {
  const int32_t dim_tiles = hd / 16;
  _tile_loadd(0, s.p, 64);
  for (int32_t dt = 0; dt < dim_tiles; dt += 4) {
    const int n = std::min<int32_t>(4, dim_tiles - dt);
    PV_TILE(4, 1, 0)
    PV_TILE(5, 2, 1)
    PV_TILE(6, 1, 2)
    PV_TILE(7, 2, 3)
    add_values(s, dt * 16, n, hd);
  }
}
#undef PV_TILE

void query_tile(const PrefillAttention& a, Scratch& s, int32_t m0) {
  const int32_t hd = a.head_dim, rows = a.n_tokens * a.group, valid = std::min(kRows, rows - m0);
  for (int r = 0; r < kRows; ++r) {
    s.limit[r] = a.first_pos + (m0 + std::min(r, valid - 1)) / a.group;
    s.max[r] = -std::numeric_limits<float>::infinity();
    s.sum[r] = 0.0f;
  }
  std::fill(s.o.begin(), s.o.end(), 0.0f);
  const int32_t blocks = s.limit[kRows - 1] / kKeys + 1;
  for (int32_t kb = 0; kb < blocks; ++kb) {
    scores(s, m0, kb, hd);
    softmax_step(s, kb);
    values(s, kb, hd);
  }
  for (int r = 0; r < valid; ++r) {
    const int32_t m = m0 + r;
    float* out = a.out + (m / a.group) * a.q_stride + (a.kv_head * a.group + m % a.group) * hd;
    const float inv = 1.0f / s.sum[r];
    for (int32_t d = 0; d < hd; ++d) out[d] = s.o[size_t(r) * size_t(hd) + size_t(d)] * inv;
  }
}

}  // namespace

bool prefill_attention_amx_fits(int32_t head_dim) {
  return active_isa() >= Isa::Amx && head_dim % 32 == 0 && head_dim <= 256;
}

void prefill_attention_amx(const PagedKv& kv, const PrefillAttention& a) {
  thread_local Scratch s;
  prepare_kv(kv, a.kv_head, a.head_dim, a.first_pos + a.n_tokens, s);
  prepare_queries(a, s);
  s.o.assign(size_t(kRows) * size_t(a.head_dim), 0.0f);
  configure_full_tiles();
  for (int32_t m0 = 0; m0 < a.n_tokens * a.group; m0 += kRows) query_tile(a, s, m0);
  _tile_release();
}

}  // namespace parley
