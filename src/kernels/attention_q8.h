#pragma once
// The paged attention kernel's loops for Q8_0 rows, written once over a SIMD
// width like attention_rows.h's (whose F32Row/accumulate they reuse), with
// no key element converted to float: each query head is rounded to int16
// with one scale (15 bits against the keys' 8) and multiplied with a block's
// 32 quants, sign-extended to int16, by vpmaddwd; per row, its blocks'
// products are scaled and summed lane-wise, then W rows' lanes reduced
// together. V sums convert each element once, with the row's weight and
// block scale multiplied beforehand; grouped heads share one float copy of
// each V row. S is the per-ISA vector set (attention_avx2.cpp: 8 lanes,
// attention_avx512.cpp: 16), providing V, W, zero, loadu, storeu, set1, mul,
// fmadd and sums as attention_rows.h describes them, and
//   I, cvt(i)               the int32 vector type; its lanes as floats
//   abs, max, hmax          |x|, lane-wise max, the largest lane
//   store_i16(dst, x)       x's lanes rounded to int16 (saturating), W of them
//   half(p), half_bcast(p)  the fp16 value at p; in every lane
//   widen(qs, dst)          32 int8 quants as 32 int16 (dst 64-byte aligned)
//   block_dot(qs | k16, q16)  W int32 lanes summing the 32 products of a
//                           block's quants (int8, or widened) with q16's
//   hsum_i(i)               the sum of i's lanes
//   q8(p)                   W int8 values from p, as floats
// Internal linkage on purpose, as attention_rows.h. A null row is an empty
// slot and is skipped.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"
#include "kernels/attention_rows.h"
#include "kernels/blocks.h"

namespace parley {
namespace {

constexpr int32_t kQ8BlockBytes = int32_t(sizeof(BlockQ8_0));
constexpr int32_t kQ8TileRows = 32;  // V rows weighted at a time
constexpr size_t kQ8Quants = offsetof(BlockQ8_0, qs);

template <class S>
float q8_block_scale(const uint8_t* row, int32_t b) {
  return S::half(row + b * kQ8BlockBytes);
}

// A query head as int16 with one scale, q ~ d * q16; returns d.
template <class S>
float quantize_query(const float* q, int32_t hd, int16_t* q16) {
  auto m = S::zero();
  for (int32_t i = 0; i < hd; i += S::W) m = S::max(m, S::abs(S::loadu(q + i)));
  const float amax = S::hmax(m);
  const auto inv = S::set1(amax > 0.0f ? 32767.0f / amax : 0.0f);
  for (int32_t i = 0; i < hd; i += S::W) S::store_i16(q16 + i, S::mul(S::loadu(q + i), inv));
  return amax / 32767.0f;
}

// Keys read straight from their rows (one query head). The scale is
// broadcast per row: assembling W rows' scales in a vector by scalar stores
// stalls the vector load on store forwarding.
template <class S>
struct RowKeys {
  const uint8_t* const* rows;
  typename S::V scale(int k, int32_t b) const { return S::half_bcast(rows[k] + b * kQ8BlockBytes); }
  typename S::I dot(int k, int32_t b, const int16_t* q16) const {
    return S::block_dot(rows[k] + b * kQ8BlockBytes + kQ8Quants, q16);
  }
};

// W rows' keys widened once for the query heads of a group.
template <class S>
struct KeyTile {
  alignas(64) int16_t q[S::W][kMaxRowFloats];
  typename S::V d[S::W][kMaxRowFloats / kQK];

  void load(const uint8_t* const* rows, int32_t nb) {
    for (int k = 0; k < S::W; ++k)
      for (int32_t b = 0; b < nb; ++b) {
        d[k][b] = S::half_bcast(rows[k] + b * kQ8BlockBytes);
        S::widen(rows[k] + b * kQ8BlockBytes + kQ8Quants, q[k] + b * kQK);
      }
  }
  typename S::V scale(int k, int32_t b) const { return d[k][b]; }
  typename S::I dot(int k, int32_t b, const int16_t* q16) const { return S::block_dot(q[k] + b * kQK, q16); }
};

// W rows' dot products with one int16 query head.
template <class S, class Keys>
typename S::V q8_dots(const Keys& keys, const int16_t* q16, int32_t nb) {
  typename S::V p[S::W];
#pragma GCC unroll 16
  for (int k = 0; k < S::W; ++k) p[k] = S::zero();
  for (int32_t b = 0; b < nb; ++b)
#pragma GCC unroll 16
    for (int k = 0; k < S::W; ++k) p[k] = S::fmadd(S::cvt(keys.dot(k, b, q16 + b * kQK)), keys.scale(k, b), p[k]);
  return S::sums(p);
}

template <class S>
float q8_row_dot(const uint8_t* row, const int16_t* q16, int32_t nb) {
  float s = 0.0f;
  for (int32_t b = 0; b < nb; ++b)
    s += q8_block_scale<S>(row, b) *
         float(S::hsum_i(S::block_dot(row + b * kQ8BlockBytes + kQ8Quants, q16 + b * kQK)));
  return s;
}

// A row's nb blocks as floats.
template <class S>
void q8_row_to_float(const uint8_t* row, int32_t nb, float* dst) {
  for (int32_t b = 0; b < nb; ++b) {
    const auto d = S::half_bcast(row + b * kQ8BlockBytes);
    for (int32_t i = 0; i < kQK; i += S::W)
      S::storeu(dst + b * kQK + i, S::mul(d, S::q8(row + b * kQ8BlockBytes + kQ8Quants + i)));
  }
}

// L vectors of out from block b0 on: the n rows' V elements weighted by
// w[b][j] (the row's weight times its block scale), in registers.
template <class S, int L>
void q8_weighted_rows(const uint8_t* const* rows, int32_t n, const float (*w)[kQ8TileRows], int32_t b0, float* out) {
  constexpr int B = kQK / S::W;  // vectors per block
  typename S::V acc[L];
#pragma GCC unroll 8
  for (int c = 0; c < L; ++c) acc[c] = S::loadu(out + b0 * kQK + S::W * c);
  for (int32_t j = 0; j < n; ++j) {
    if (!rows[j]) continue;
    const uint8_t* qs = rows[j] + b0 * kQ8BlockBytes + kQ8Quants;
#pragma GCC unroll 8
    for (int c = 0; c < L; ++c)
      acc[c] = S::fmadd(S::set1(w[b0 + c / B][j]), S::q8(qs + (c / B) * kQ8BlockBytes + S::W * (c % B)), acc[c]);
  }
#pragma GCC unroll 8
  for (int c = 0; c < L; ++c) S::storeu(out + b0 * kQK + S::W * c, acc[c]);
}

// One head's weighted V rows, kQ8TileRows at a time, 8 vectors of out a pass.
template <class S>
void q8_head_values(const uint8_t* const* rows, int32_t n, const float* p, int32_t nb, float* out) {
  constexpr int B = kQK / S::W;
  float w[kMaxRowFloats / kQK][kQ8TileRows];
  for (int32_t j0 = 0; j0 < n; j0 += kQ8TileRows, rows += kQ8TileRows, p += kQ8TileRows) {
    const int32_t m = std::min(kQ8TileRows, n - j0);
    for (int32_t j = 0; j < m; ++j)
      if (rows[j])
        for (int32_t b = 0; b < nb; ++b) w[b][j] = p[j] * q8_block_scale<S>(rows[j], b);
    int32_t b0 = 0;
    for (; b0 + 8 / B <= nb; b0 += 8 / B) q8_weighted_rows<S, 8>(rows, m, w, b0, out);
    if constexpr (B <= 4)
      if (b0 + 4 / B <= nb) q8_weighted_rows<S, 4>(rows, m, w, b0, out), b0 += 4 / B;
    if constexpr (B <= 2)
      if (b0 < nb) q8_weighted_rows<S, 2>(rows, m, w, b0, out);
  }
}

// s[g * s_stride + j] = scale * (q_g . K_j) for Q8_0 rows (head_dim % 32 == 0).
template <class S>
void q8_scores(const uint8_t* const* rows, int32_t n, const float* q, int32_t group, int32_t hd, float scale,
               float* s, int32_t s_stride) {
  constexpr int W = S::W;
  const int32_t nb = hd / kQK;
  alignas(64) int16_t q16[kMaxAttentionGroup][kMaxRowFloats];
  float qd[kMaxAttentionGroup];
  for (int32_t g = 0; g < group; ++g) qd[g] = scale * quantize_query<S>(q + size_t(g) * size_t(hd), hd, q16[g]);
  KeyTile<S> tile;
  int32_t j = 0;
  for (; j + W <= n && all_rows<W>(rows + j); j += W) {
    if (group == 1) {
      S::storeu(s + j, S::mul(S::set1(qd[0]), q8_dots<S>(RowKeys<S>{rows + j}, q16[0], nb)));
      continue;
    }
    tile.load(rows + j, nb);
    for (int32_t g = 0; g < group; ++g)
      S::storeu(s + size_t(g) * size_t(s_stride) + size_t(j), S::mul(S::set1(qd[g]), q8_dots<S>(tile, q16[g], nb)));
  }
  for (; j < n; ++j)
    if (rows[j])
      for (int32_t g = 0; g < group; ++g)
        s[size_t(g) * size_t(s_stride) + size_t(j)] = qd[g] * q8_row_dot<S>(rows[j], q16[g], nb);
}

// out_g += sum_j p[g * p_stride + j] * V_j for Q8_0 rows.
template <class S>
void q8_values(const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride, int32_t group, int32_t hd,
               float* out) {
  const int32_t nb = hd / kQK;
  if (group == 1) return q8_head_values<S>(rows, n, p, nb, out);
  alignas(64) float buf[kQ8TileRows * kMaxRowFloats];
  const uint8_t* converted[kQ8TileRows];
  for (int32_t j0 = 0; j0 < n; j0 += kQ8TileRows) {
    const int32_t m = std::min(kQ8TileRows, n - j0);
    for (int32_t j = 0; j < m; ++j) {
      converted[j] = nullptr;
      if (!rows[j0 + j]) continue;
      float* dst = buf + size_t(j) * size_t(hd);
      q8_row_to_float<S>(rows[j0 + j], nb, dst);
      converted[j] = reinterpret_cast<const uint8_t*>(dst);
    }
    for (int32_t g = 0; g < group; ++g)
      accumulate<S, F32Row<S>>(converted, m, p + size_t(g) * size_t(p_stride) + size_t(j0), hd,
                               out + size_t(g) * size_t(hd));
  }
}

}  // namespace
}  // namespace parley
