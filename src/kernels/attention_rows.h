#pragma once
// The paged attention kernel's row loops (scores q . K_j and sums p_j V_j
// over a tile of cache rows), written once over a SIMD width: S is the
// per-ISA file's vector set (attention_avx2.cpp: 8 floats, attention_avx512.cpp:
// 16), providing
//   V, W                      the vector type and its float count
//   zero, loadu, store (aligned), storeu, set1, add, mul, fmadd
//   f16(p)                    W fp16 values from p, as floats
//   hsum(v)                   the sum of v's lanes
//   sums(acc)                 the W sums of acc[0..W-1]'s lanes, in order
// Internal linkage on purpose: each per-ISA file must get its own copy
// compiled with its flags. A null row is an empty slot and is skipped.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/dtype.h"

namespace parley {
namespace {

// W elements of a row from element i (i % W == 0), as floats.
template <class S>
struct F32Row {
  static typename S::V load(const uint8_t* row, int32_t i) { return S::loadu(reinterpret_cast<const float*>(row) + i); }
};
template <class S>
struct F16Row {
  static typename S::V load(const uint8_t* row, int32_t i) { return S::f16(row + 2 * i); }
};

constexpr int32_t kMaxRowFloats = 512;  // kMaxAttentionHeadDim

template <class S, class Row>
float dot_row(const float* q, const uint8_t* row, int32_t hd) {
  constexpr int W = S::W;
  auto a0 = S::zero(), a1 = S::zero();
  int32_t i = 0;
  for (; i + 2 * W <= hd; i += 2 * W) {
    a0 = S::fmadd(S::loadu(q + i), Row::load(row, i), a0);
    a1 = S::fmadd(S::loadu(q + i + W), Row::load(row, i + W), a1);
  }
  if (i < hd) a0 = S::fmadd(S::loadu(q + i), Row::load(row, i), a0);
  return S::hsum(S::add(a0, a1));
}

// W rows (none empty) against one query head.
template <class S, class Row>
void scores_w(const uint8_t* const* rows, const float* q, int32_t hd, float scale, float* s) {
  constexpr int W = S::W;
  // Unrolled by hand-set pragmas: GCC otherwise keeps acc[] on the stack and
  // every FMA waits on a store and a reload.
  typename S::V acc[W];
#pragma GCC unroll 16
  for (int k = 0; k < W; ++k) acc[k] = S::zero();
  for (int32_t i = 0; i < hd; i += W) {
    const auto qv = S::loadu(q + i);
#pragma GCC unroll 16
    for (int k = 0; k < W; ++k) acc[k] = S::fmadd(qv, Row::load(rows[k], i), acc[k]);
  }
  S::storeu(s, S::mul(S::set1(scale), S::sums(acc)));
}

template <int W>
bool all_rows(const uint8_t* const* rows) {
  for (int k = 0; k < W; ++k)
    if (!rows[k]) return false;
  return true;
}

// Rows W at a time where none is empty, else one by one. With several
// heads, each row is converted once into L1 (F32 rows are read in place)
// and then read by every head.
template <class S, class Row>
void scores(const uint8_t* const* rows, int32_t n, const float* q, int32_t group, int32_t hd, float scale, float* s,
            int32_t s_stride) {
  constexpr int W = S::W;
  constexpr bool in_place = std::is_same_v<Row, F32Row<S>>;
  alignas(64) float buf[W * kMaxRowFloats];
  const uint8_t* converted[W];
  int32_t j = 0;
  for (; j + W <= n; j += W) {
    if (!all_rows<W>(rows + j)) break;
    if (group == 1) {
      scores_w<S, Row>(rows + j, q, hd, scale, s + j);
      continue;
    }
    const uint8_t* const* tile = rows + j;
    if constexpr (!in_place) {
      for (int k = 0; k < W; ++k) {
        float* dst = buf + size_t(k) * size_t(hd);
        for (int32_t i = 0; i < hd; i += W) S::store(dst + i, Row::load(rows[j + k], i));
        converted[k] = reinterpret_cast<const uint8_t*>(dst);
      }
      tile = converted;
    }
    for (int32_t g = 0; g < group; ++g)
      scores_w<S, F32Row<S>>(tile, q + size_t(g) * size_t(hd), hd, scale, s + size_t(g) * size_t(s_stride) + size_t(j));
  }
  for (; j < n; ++j) {
    if (!rows[j]) continue;
    if (group == 1) {
      s[j] = scale * dot_row<S, Row>(q, rows[j], hd);
      continue;
    }
    const uint8_t* row = rows[j];
    if constexpr (!in_place) {
      for (int32_t i = 0; i < hd; i += W) S::store(buf + i, Row::load(rows[j], i));
      row = reinterpret_cast<const uint8_t*>(buf);
    }
    for (int32_t g = 0; g < group; ++g)
      s[size_t(g) * size_t(s_stride) + size_t(j)] = scale * dot_row<S, F32Row<S>>(q + size_t(g) * size_t(hd), row, hd);
  }
}

// Weighted rows summed into out[d0, d0 + W * L), held in L registers (the
// count is a template argument so that acc[] stays out of memory).
template <class S, class Row, int L>
void accumulate_lanes(const uint8_t* const* rows, int32_t n, const float* p, int32_t d0, float* out) {
  constexpr int W = S::W;
  typename S::V acc[L];
#pragma GCC unroll 8
  for (int c = 0; c < L; ++c) acc[c] = S::loadu(out + d0 + W * c);
  for (int32_t j = 0; j < n; ++j) {
    if (!rows[j] || p[j] == 0.0f) continue;
    const auto w = S::set1(p[j]);
#pragma GCC unroll 8
    for (int c = 0; c < L; ++c) acc[c] = S::fmadd(w, Row::load(rows[j], d0 + W * c), acc[c]);
  }
#pragma GCC unroll 8
  for (int c = 0; c < L; ++c) S::storeu(out + d0 + W * c, acc[c]);
}

// Weighted rows summed into out, 8 vectors at a time.
template <class S, class Row>
void accumulate(const uint8_t* const* rows, int32_t n, const float* p, int32_t hd, float* out) {
  constexpr int W = S::W;
  int32_t d0 = 0;
  for (; d0 + 8 * W <= hd; d0 += 8 * W) accumulate_lanes<S, Row, 8>(rows, n, p, d0, out);
  switch ((hd - d0) / W) {
    case 1: return accumulate_lanes<S, Row, 1>(rows, n, p, d0, out);
    case 2: return accumulate_lanes<S, Row, 2>(rows, n, p, d0, out);
    case 3: return accumulate_lanes<S, Row, 3>(rows, n, p, d0, out);
    case 4: return accumulate_lanes<S, Row, 4>(rows, n, p, d0, out);
    case 5: return accumulate_lanes<S, Row, 5>(rows, n, p, d0, out);
    case 6: return accumulate_lanes<S, Row, 6>(rows, n, p, d0, out);
    case 7: return accumulate_lanes<S, Row, 7>(rows, n, p, d0, out);
    default: return;
  }
}

template <class S, class Row>
void values(const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride, int32_t group, int32_t hd,
            float* out) {
  constexpr int W = S::W;
  if (group == 1 || std::is_same_v<Row, F32Row<S>>) {  // F32 rows need no conversion
    for (int32_t g = 0; g < group; ++g)
      accumulate<S, Row>(rows, n, p + size_t(g) * size_t(p_stride), hd, out + size_t(g) * size_t(hd));
    return;
  }
  // Convert the tile's rows once, then every head sums the float copies.
  alignas(64) float buf[32 * kMaxRowFloats];
  const uint8_t* converted[32];
  for (int32_t j0 = 0; j0 < n; j0 += 32) {
    const int32_t m = n - j0 < 32 ? n - j0 : 32;
    for (int32_t j = 0; j < m; ++j) {
      converted[j] = nullptr;
      if (!rows[j0 + j]) continue;
      float* dst = buf + size_t(j) * size_t(hd);
      for (int32_t i = 0; i < hd; i += W) S::store(dst + i, Row::load(rows[j0 + j], i));
      converted[j] = reinterpret_cast<const uint8_t*>(dst);
    }
    for (int32_t g = 0; g < group; ++g)
      accumulate<S, F32Row<S>>(converted, m, p + size_t(g) * size_t(p_stride) + size_t(j0), hd,
                               out + size_t(g) * size_t(hd));
  }
}

// The two entry points of a per-ISA file for F32 and F16 rows (Q8_0 rows
// have attention_q8.h's loops).
template <class S>
void scores_of(DType type, const uint8_t* const* rows, int32_t n, const float* q, int32_t group, int32_t hd,
               float scale, float* s, int32_t s_stride) {
  switch (type) {
    case DType::F16: return scores<S, F16Row<S>>(rows, n, q, group, hd, scale, s, s_stride);
    default: return scores<S, F32Row<S>>(rows, n, q, group, hd, scale, s, s_stride);
  }
}

template <class S>
void values_of(DType type, const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride, int32_t group,
               int32_t hd, float* out) {
  switch (type) {
    case DType::F16: return values<S, F16Row<S>>(rows, n, p, p_stride, group, hd, out);
    default: return values<S, F32Row<S>>(rows, n, p, p_stride, group, hd, out);
  }
}

}  // namespace
}  // namespace parley
