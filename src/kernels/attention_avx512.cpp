// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/attention_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "kernels/attention_rows.h"
#include "kernels/attention.h"
#include "kernels/simd_avx2.h"

namespace parley::avx512 {
namespace {

// Per 128-bit lane: a0+a1, a2+a3 of a, then of b (AVX2's hadd, four lanes wide).
inline __m512 hadd(__m512 a, __m512 b) {
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

// The 16 sums of a[0..15]'s lanes, in order: two levels of pairwise adds
// leave, in 128-bit lane L of u[i], lane L's sums of a[4i .. 4i+3]; two
// levels of lane shuffles add the four lanes. Forced inline: a call would
// pass a[] through memory.
[[gnu::always_inline]] inline __m512 sums16(const __m512* a) {
  __m512 t[8], u[4];  // unrolled by pragma, or GCC 12 keeps them in memory
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) t[i] = hadd(a[2 * i], a[2 * i + 1]);
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) u[i] = hadd(t[2 * i], t[2 * i + 1]);
  const __m512 y0 = _mm512_add_ps(_mm512_shuffle_f32x4(u[0], u[1], 0x44), _mm512_shuffle_f32x4(u[0], u[1], 0xee));
  const __m512 y1 = _mm512_add_ps(_mm512_shuffle_f32x4(u[2], u[3], 0x44), _mm512_shuffle_f32x4(u[2], u[3], 0xee));
  return _mm512_add_ps(_mm512_shuffle_f32x4(y0, y1, 0x88), _mm512_shuffle_f32x4(y0, y1, 0xdd));
}

// What attention_rows.h's accumulate needs of a vector set, for float rows.
struct Vec16 {
  using V = __m512;
  static constexpr int W = 16;
  static V loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
};

constexpr int32_t kBlockBytes = int32_t(sizeof(BlockQ8_0));
constexpr int32_t kTileRows = 32;  // V rows weighted at a time

// A query head as int16 with one scale, q ~ d * q16, returning d: 15 bits
// against the keys' 8, so the scores' error stays near F32's while the dot
// products run on vpmaddwd (16 pairs a step) instead of converting every
// key element to float.
float quantize_query(const float* q, int32_t hd, int16_t* q16) {
  __m512 m = _mm512_setzero_ps();
  for (int32_t i = 0; i < hd; i += 16) m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(q + i)));
  const float amax = _mm512_reduce_max_ps(m);
  const __m512 inv = _mm512_set1_ps(amax > 0.0f ? 32767.0f / amax : 0.0f);
  for (int32_t i = 0; i < hd; i += 16)
    _mm256_store_si256(reinterpret_cast<__m256i*>(q16 + i),
                       _mm512_cvtsepi32_epi16(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(q + i), inv))));
  return amax / 32767.0f;
}

// Block b of a row: its scale in every lane, and its 32 quants as int16.
// (The scale is broadcast per row: assembling 16 rows' scales in a vector
// by scalar stores stalls the vector load on store forwarding.)
__m512 block_scale(const uint8_t* row, int32_t b) {
  uint16_t d;
  std::memcpy(&d, row + b * kBlockBytes, 2);
  return _mm512_cvtph_ps(_mm256_set1_epi16(short(d)));
}
__m512i block_quants(const uint8_t* row, int32_t b) {
  return _mm512_cvtepi8_epi16(load256(row + b * kBlockBytes + offsetof(BlockQ8_0, qs)));
}

// Keys read straight from their rows (one query head).
struct RowKeys {
  const uint8_t* const* rows;
  __m512 scale(int k, int32_t b) const { return block_scale(rows[k], b); }
  __m512i quants(int k, int32_t b) const { return block_quants(rows[k], b); }
};

// 16 rows' keys unpacked once for the query heads of a group.
struct KeyTile {
  alignas(64) int16_t q[16][kMaxRowFloats];
  __m512 d[16][kMaxRowFloats / kQK];

  void load(const uint8_t* const* rows, int32_t nb) {
    for (int k = 0; k < 16; ++k)
      for (int32_t b = 0; b < nb; ++b) {
        d[k][b] = block_scale(rows[k], b);
        _mm512_store_si512(q[k] + b * kQK, block_quants(rows[k], b));
      }
  }
  __m512 scale(int k, int32_t b) const { return d[k][b]; }
  __m512i quants(int k, int32_t b) const { return _mm512_load_si512(q[k] + b * kQK); }
};

// 16 rows' dot products with one int16 query head: per row, its blocks'
// products scaled and summed lane-wise, then the 16 rows' lanes summed.
template <class Keys>
__m512 dots(const Keys& keys, const int16_t* q16, int32_t nb) {
  __m512 p[16];
#pragma GCC unroll 16
  for (int k = 0; k < 16; ++k) p[k] = _mm512_setzero_ps();
  for (int32_t b = 0; b < nb; ++b) {
    const __m512i qv = _mm512_load_si512(q16 + b * kQK);
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k)
      p[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_madd_epi16(keys.quants(k, b), qv)), keys.scale(k, b), p[k]);
  }
  return sums16(p);
}

float row_dot(const uint8_t* row, const int16_t* q16, int32_t nb) {
  float s = 0.0f;
  for (int32_t b = 0; b < nb; ++b)
    s += half_to_float(row + b * kBlockBytes) *
         float(_mm512_reduce_add_epi32(_mm512_madd_epi16(block_quants(row, b), _mm512_load_si512(q16 + b * kQK))));
  return s;
}

// A V row's nb blocks as floats (for the heads of a group to share).
void row_to_float(const uint8_t* row, int32_t nb, float* dst) {
  for (int32_t b = 0; b < nb; ++b, dst += kQK) {
    const uint8_t* qs = row + b * kBlockBytes + offsetof(BlockQ8_0, qs);
    const __m512 d = block_scale(row, b);
    _mm512_store_ps(dst, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load128(qs)))));
    _mm512_store_ps(dst + 16, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load128(qs + 16)))));
  }
}

// L vectors of 16 floats of out, from block b0 on: the n rows' V elements
// weighted by w[b][j] (the row's weight times its block scale).
template <int L>
void weighted_rows(const uint8_t* const* rows, int32_t n, const float (*w)[kTileRows], int32_t b0, float* out) {
  __m512 acc[L];
#pragma GCC unroll 8
  for (int c = 0; c < L; ++c) acc[c] = _mm512_loadu_ps(out + b0 * kQK + 16 * c);
  for (int32_t j = 0; j < n; ++j) {
    if (!rows[j]) continue;
    const uint8_t* qs = rows[j] + b0 * kBlockBytes + offsetof(BlockQ8_0, qs);
#pragma GCC unroll 8
    for (int c = 0; c < L; ++c) {
      const __m512 v = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load128(qs + (c / 2) * kBlockBytes + 16 * (c % 2))));
      acc[c] = _mm512_fmadd_ps(_mm512_set1_ps(w[b0 + c / 2][j]), v, acc[c]);
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < L; ++c) _mm512_storeu_ps(out + b0 * kQK + 16 * c, acc[c]);
}

// One head's weighted V rows, kTileRows at a time: each row's weight times
// its block scales first, then the rows summed 8 vectors of out at a time.
void head_values(const uint8_t* const* rows, int32_t n, const float* p, int32_t nb, float* out) {
  float w[kMaxRowFloats / kQK][kTileRows];
  for (int32_t j0 = 0; j0 < n; j0 += kTileRows, rows += kTileRows, p += kTileRows) {
    const int32_t m = std::min(kTileRows, n - j0);
    for (int32_t j = 0; j < m; ++j)
      if (rows[j])
        for (int32_t b = 0; b < nb; ++b) w[b][j] = p[j] * half_to_float(rows[j] + b * kBlockBytes);
    int32_t b0 = 0;
    for (; b0 + 4 <= nb; b0 += 4) weighted_rows<8>(rows, m, w, b0, out);
    if (b0 + 2 <= nb) weighted_rows<4>(rows, m, w, b0, out), b0 += 2;
    if (b0 < nb) weighted_rows<2>(rows, m, w, b0, out);
  }
}

}  // namespace

void attention_scores_q8_0(const uint8_t* const* rows, int32_t n, const float* q, int32_t group, int32_t head_dim,
                           float scale, float* s, int32_t s_stride) {
  const int32_t nb = head_dim / kQK;
  alignas(64) int16_t q16[kMaxAttentionGroup][kMaxRowFloats];
  float qd[kMaxAttentionGroup];
  for (int32_t g = 0; g < group; ++g) qd[g] = scale * quantize_query(q + size_t(g) * size_t(head_dim), head_dim, q16[g]);
  KeyTile tile;
  int32_t j = 0;
  for (; j + 16 <= n && all_rows<16>(rows + j); j += 16) {
    if (group == 1) {
      _mm512_storeu_ps(s + j, _mm512_mul_ps(_mm512_set1_ps(qd[0]), dots(RowKeys{rows + j}, q16[0], nb)));
      continue;
    }
    tile.load(rows + j, nb);
    for (int32_t g = 0; g < group; ++g)
      _mm512_storeu_ps(s + size_t(g) * size_t(s_stride) + size_t(j),
                       _mm512_mul_ps(_mm512_set1_ps(qd[g]), dots(tile, q16[g], nb)));
  }
  for (; j < n; ++j)
    if (rows[j])
      for (int32_t g = 0; g < group; ++g) s[size_t(g) * size_t(s_stride) + size_t(j)] = qd[g] * row_dot(rows[j], q16[g], nb);
}

void attention_values_q8_0(const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride, int32_t group,
                           int32_t head_dim, float* out) {
  const int32_t nb = head_dim / kQK;
  if (group == 1) return head_values(rows, n, p, nb, out);
  // Several heads: each row converted to floats once, then summed by every head.
  alignas(64) float buf[kTileRows * kMaxRowFloats];
  const uint8_t* converted[kTileRows];
  for (int32_t j0 = 0; j0 < n; j0 += kTileRows) {
    const int32_t m = std::min(kTileRows, n - j0);
    for (int32_t j = 0; j < m; ++j) {
      converted[j] = nullptr;
      if (!rows[j0 + j]) continue;
      float* dst = buf + size_t(j) * size_t(head_dim);
      row_to_float(rows[j0 + j], nb, dst);
      converted[j] = reinterpret_cast<const uint8_t*>(dst);
    }
    for (int32_t g = 0; g < group; ++g)
      accumulate<Vec16, F32Row<Vec16>>(converted, m, p + size_t(g) * size_t(p_stride) + size_t(j0), head_dim,
                                       out + size_t(g) * size_t(head_dim));
  }
}

}  // namespace parley::avx512
