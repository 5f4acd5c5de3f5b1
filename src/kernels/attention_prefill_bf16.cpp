// Prefill attention (attention_prefill.h): the layouts and the online softmax,
// with the products on AVX512-BF16 vectors, or on AMX tiles
// (attention_prefill_amx.cpp) where the CPU has them.
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/attention_prefill.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/attention_prefill_tiles.h"
#include "kernels/cpu.h"

namespace parley::prefill {
namespace {

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

const float* key_row(const PagedKv& kv, const uint8_t* base, int32_t slot, int32_t kv_head, int32_t hd, float* buf) {
  const uint8_t* row = base + kv.row_offset(slot, kv_head);
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

inline __m512bh pair_at(const uint16_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return __m512bh(_mm512_set1_epi32(v));
}
inline __m512bh row_of(const Tile& t, int i) { return __m512bh(_mm512_load_si512(t.v[i])); }

// The scores of keys kb * 32 .. + 31 for rows m0 .. m0 + 15 into s.s, four
// rows at a time (8 independent sums).
void scores_on_vectors(Scratch& s, int32_t m0, int32_t kb, int32_t hd) {
  const int32_t chunks = hd / 32;
  for (int r0 = 0; r0 < kRows; r0 += 4) {
    __m512 acc[4][2];
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int32_t c = 0; c < chunks; ++c) {
      const Tile& k0 = s.kt[size_t((2 * kb) * chunks + c)];
      const Tile& k1 = s.kt[size_t((2 * kb + 1) * chunks + c)];
      const uint16_t* q = s.q.data() + size_t(m0 + r0) * size_t(hd) + size_t(c) * 32;
#pragma GCC unroll 4
      for (int i = 0; i < 16; ++i) {
        const __m512bh a = row_of(k0, i), b = row_of(k1, i);
#pragma GCC unroll 4
        for (int r = 0; r < 4; ++r) {
          const __m512bh qp = pair_at(q + r * hd + 2 * i);
          acc[r][0] = _mm512_dpbf16_ps(acc[r][0], a, qp);
          acc[r][1] = _mm512_dpbf16_ps(acc[r][1], b, qp);
        }
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) {
      _mm512_store_ps(s.s[r0 + r], acc[r][0]);
      _mm512_store_ps(s.s[r0 + r] + 16, acc[r][1]);
    }
  }
}

// o = o * corr + P V for keys kb * 32 .. + 31, four rows and 32 dims at a time.
void values_on_vectors(Scratch& s, int32_t kb, int32_t hd) {
  const int32_t dim_tiles = hd / 16;
  for (int r0 = 0; r0 < kRows; r0 += 4)
    for (int32_t dt = 0; dt < dim_tiles; dt += 2) {
      const Tile& v0 = s.vt[size_t(kb * dim_tiles + dt)];
      const Tile& v1 = s.vt[size_t(kb * dim_tiles + dt + 1)];
      __m512 acc[4][2];
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r) {
        const float* o = s.o.data() + size_t(r0 + r) * size_t(hd) + size_t(dt) * 16;
        const __m512 c = _mm512_set1_ps(s.corr[r0 + r]);
        acc[r][0] = _mm512_mul_ps(_mm512_loadu_ps(o), c);
        acc[r][1] = _mm512_mul_ps(_mm512_loadu_ps(o + 16), c);
      }
#pragma GCC unroll 4
      for (int i = 0; i < 16; ++i) {
        const __m512bh a = row_of(v0, i), b = row_of(v1, i);
#pragma GCC unroll 4
        for (int r = 0; r < 4; ++r) {
          const __m512bh pp = pair_at(s.p[r0 + r] + 2 * i);
          acc[r][0] = _mm512_dpbf16_ps(acc[r][0], a, pp);
          acc[r][1] = _mm512_dpbf16_ps(acc[r][1], b, pp);
        }
      }
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r) {
        float* o = s.o.data() + size_t(r0 + r) * size_t(hd) + size_t(dt) * 16;
        _mm512_storeu_ps(o, acc[r][0]);
        _mm512_storeu_ps(o + 16, acc[r][1]);
      }
    }
}

void query_tile(const PrefillAttention& a, Scratch& s, int32_t m0, bool tiles) {
  const int32_t hd = a.head_dim, rows = a.n_tokens * a.group, valid = std::min(kRows, rows - m0);
  for (int r = 0; r < kRows; ++r) {
    s.limit[r] = a.first_pos + (m0 + std::min(r, valid - 1)) / a.group;
    s.max[r] = -std::numeric_limits<float>::infinity();
    s.sum[r] = 0.0f;
  }
  std::fill(s.o.begin(), s.o.end(), 0.0f);
  const int32_t blocks = s.limit[kRows - 1] / kKeys + 1;
  for (int32_t kb = 0; kb < blocks; ++kb) {
    if (tiles) scores_on_tiles(s, m0, kb, hd);
    else scores_on_vectors(s, m0, kb, hd);
    softmax_step(s, kb);
    if (tiles) values_on_tiles(s, kb, hd);
    else values_on_vectors(s, kb, hd);
  }
  for (int r = 0; r < valid; ++r) {
    const int32_t m = m0 + r;
    float* out = a.out + (m / a.group) * a.q_stride + (a.kv_head * a.group + m % a.group) * hd;
    const float inv = 1.0f / s.sum[r];
    for (int32_t d = 0; d < hd; ++d) out[d] = s.o[size_t(r) * size_t(hd) + size_t(d)] * inv;
  }
}

}  // namespace

}  // namespace parley::prefill

namespace parley {

bool prefill_attention_fits(int32_t head_dim) {
  static const bool vectors = has_avx512_bf16();
  return head_dim % 32 == 0 && head_dim <= 256 &&
         (active_isa() >= Isa::Amx || (active_isa() >= Isa::Avx512 && vectors));
}

void prefill_attention(const PagedKv& kv, const PrefillAttention& a) {
  using namespace prefill;
  thread_local Scratch s;
  const bool tiles = active_isa() >= Isa::Amx;
  prepare_kv(kv, a.kv_head, a.head_dim, a.first_pos + a.n_tokens, s);
  prepare_queries(a, s);
  s.o.assign(size_t(kRows) * size_t(a.head_dim), 0.0f);
  if (tiles) begin_tiles();
  for (int32_t m0 = 0; m0 < a.n_tokens * a.group; m0 += kRows) query_tile(a, s, m0, tiles);
  if (tiles) end_tiles();
}

}  // namespace parley
