#include "kernels/attention_avx2.h"

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/blocks.h"
#include "kernels/simd_avx2.h"
#include "util/fp16.h"

namespace parley::avx2 {
namespace {

// Eight elements of a row starting at element i (i % 8 == 0), as floats.
struct F32Row {
  static __m256 load(const uint8_t* row, int32_t i) { return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i); }
};
struct F16Row {
  static __m256 load(const uint8_t* row, int32_t i) { return _mm256_cvtph_ps(load128(row + 2 * i)); }
};
struct Q8_0Row {
  static __m256 load(const uint8_t* row, int32_t i) {
    const uint8_t* block = row + size_t(i / kQK) * sizeof(BlockQ8_0);
    const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + offsetof(BlockQ8_0, qs) + i % kQK));
    return _mm256_mul_ps(_mm256_set1_ps(half_to_float(block)), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)));
  }
};

template <class Row>
float dot_row(const float* q, const uint8_t* row, int32_t hd) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int32_t i = 0;
  for (; i + 16 <= hd; i += 16) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), Row::load(row, i), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), Row::load(row, i + 8), a1);
  }
  if (i < hd) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), Row::load(row, i), a0);
  return hsum(_mm256_add_ps(a0, a1));
}

// The eight sums of a[0..7]'s lanes, in order: a transpose by pairwise adds
// instead of eight horizontal sums.
inline __m256 sum8(const __m256* a) {
  const __m256 t0 = _mm256_hadd_ps(a[0], a[1]), t1 = _mm256_hadd_ps(a[2], a[3]);
  const __m256 t2 = _mm256_hadd_ps(a[4], a[5]), t3 = _mm256_hadd_ps(a[6], a[7]);
  const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

// Eight rows (none empty) against one query head.
template <class Row>
void scores8(const uint8_t* const* rows, const float* q, int32_t hd, float scale, float* s) {
  // Unrolled by hand-set pragmas: GCC otherwise keeps acc[] on the stack and
  // every FMA waits on a store and a reload.
  __m256 acc[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) acc[k] = _mm256_setzero_ps();
  for (int32_t i = 0; i < hd; i += 8) {
    const __m256 qv = _mm256_loadu_ps(q + i);
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) acc[k] = _mm256_fmadd_ps(qv, Row::load(rows[k], i), acc[k]);
  }
  _mm256_storeu_ps(s, _mm256_mul_ps(_mm256_set1_ps(scale), sum8(acc)));
}

bool all_rows(const uint8_t* const* rows) {
  for (int k = 0; k < 8; ++k)
    if (!rows[k]) return false;
  return true;
}

// Rows eight at a time where none is empty, else one by one. With several
// heads, each row is converted once into L1 and then read by every head.
template <class Row>
void scores(const uint8_t* const* rows, int32_t n, const float* q, int32_t group, int32_t hd, float scale, float* s,
            int32_t s_stride) {
  alignas(32) float buf[8 * 512];
  const uint8_t* converted[8];
  int32_t j = 0;
  for (; j + 8 <= n; j += 8) {
    if (!all_rows(rows + j)) break;
    if (group == 1) {
      scores8<Row>(rows + j, q, hd, scale, s + j);
      continue;
    }
    const uint8_t* const* tile = rows + j;  // F32 rows are read in place
    if constexpr (!std::is_same_v<Row, F32Row>) {
      for (int k = 0; k < 8; ++k) {
        float* dst = buf + size_t(k) * size_t(hd);
        for (int32_t i = 0; i < hd; i += 8) _mm256_store_ps(dst + i, Row::load(rows[j + k], i));
        converted[k] = reinterpret_cast<const uint8_t*>(dst);
      }
      tile = converted;
    }
    for (int32_t g = 0; g < group; ++g)
      scores8<F32Row>(tile, q + size_t(g) * size_t(hd), hd, scale, s + size_t(g) * size_t(s_stride) + size_t(j));
  }
  for (; j < n; ++j) {
    if (!rows[j]) continue;
    if (group == 1) {
      s[j] = scale * dot_row<Row>(q, rows[j], hd);
      continue;
    }
    for (int32_t i = 0; i < hd; i += 8) _mm256_store_ps(buf + i, Row::load(rows[j], i));
    for (int32_t g = 0; g < group; ++g)
      s[size_t(g) * size_t(s_stride) + size_t(j)] =
          scale * dot_row<F32Row>(q + size_t(g) * size_t(hd), reinterpret_cast<const uint8_t*>(buf), hd);
  }
}

// Weighted rows summed into out[d0, d0 + 8 * L), held in L registers (the
// count is a template argument so that acc[] stays out of memory).
template <class Row, int L>
void accumulate_lanes(const uint8_t* const* rows, int32_t n, const float* p, int32_t d0, float* out) {
  __m256 acc[L];
#pragma GCC unroll 8
  for (int c = 0; c < L; ++c) acc[c] = _mm256_loadu_ps(out + d0 + 8 * c);
  for (int32_t j = 0; j < n; ++j) {
    if (!rows[j] || p[j] == 0.0f) continue;
    const __m256 w = _mm256_set1_ps(p[j]);
#pragma GCC unroll 8
    for (int c = 0; c < L; ++c) acc[c] = _mm256_fmadd_ps(w, Row::load(rows[j], d0 + 8 * c), acc[c]);
  }
#pragma GCC unroll 8
  for (int c = 0; c < L; ++c) _mm256_storeu_ps(out + d0 + 8 * c, acc[c]);
}

// Weighted rows summed into out, 64 dimensions at a time.
template <class Row>
void accumulate(const uint8_t* const* rows, int32_t n, const float* p, int32_t hd, float* out) {
  int32_t d0 = 0;
  for (; d0 + 64 <= hd; d0 += 64) accumulate_lanes<Row, 8>(rows, n, p, d0, out);
  switch ((hd - d0) / 8) {
    case 1: return accumulate_lanes<Row, 1>(rows, n, p, d0, out);
    case 2: return accumulate_lanes<Row, 2>(rows, n, p, d0, out);
    case 3: return accumulate_lanes<Row, 3>(rows, n, p, d0, out);
    case 4: return accumulate_lanes<Row, 4>(rows, n, p, d0, out);
    case 5: return accumulate_lanes<Row, 5>(rows, n, p, d0, out);
    case 6: return accumulate_lanes<Row, 6>(rows, n, p, d0, out);
    case 7: return accumulate_lanes<Row, 7>(rows, n, p, d0, out);
    default: return;
  }
}

template <class Row>
void values(const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride, int32_t group, int32_t hd,
            float* out) {
  if (group == 1 || std::is_same_v<Row, F32Row>) {  // F32 rows need no conversion
    for (int32_t g = 0; g < group; ++g) accumulate<Row>(rows, n, p + size_t(g) * size_t(p_stride), hd, out + size_t(g) * size_t(hd));
    return;
  }
  // Convert the tile's rows once, then every head sums the float copies.
  alignas(32) float buf[32 * 512];
  const uint8_t* converted[32];
  for (int32_t j0 = 0; j0 < n; j0 += 32) {
    const int32_t m = n - j0 < 32 ? n - j0 : 32;
    for (int32_t j = 0; j < m; ++j) {
      converted[j] = nullptr;
      if (!rows[j0 + j]) continue;
      float* dst = buf + size_t(j) * size_t(hd);
      for (int32_t i = 0; i < hd; i += 8) _mm256_store_ps(dst + i, Row::load(rows[j0 + j], i));
      converted[j] = reinterpret_cast<const uint8_t*>(dst);
    }
    for (int32_t g = 0; g < group; ++g)
      accumulate<F32Row>(converted, m, p + size_t(g) * size_t(p_stride) + size_t(j0), hd, out + size_t(g) * size_t(hd));
  }
}

}  // namespace

void attention_scores(DType type, const uint8_t* const* rows, int32_t n, const float* q, int32_t group,
                      int32_t head_dim, float scale, float* s, int32_t s_stride) {
  switch (type) {
    case DType::F16: return scores<F16Row>(rows, n, q, group, head_dim, scale, s, s_stride);
    case DType::Q8_0: return scores<Q8_0Row>(rows, n, q, group, head_dim, scale, s, s_stride);
    default: return scores<F32Row>(rows, n, q, group, head_dim, scale, s, s_stride);
  }
}

void attention_values(DType type, const uint8_t* const* rows, int32_t n, const float* p, int32_t p_stride,
                      int32_t group, int32_t head_dim, float* out) {
  switch (type) {
    case DType::F16: return values<F16Row>(rows, n, p, p_stride, group, head_dim, out);
    case DType::Q8_0: return values<Q8_0Row>(rows, n, p, p_stride, group, head_dim, out);
    default: return values<F32Row>(rows, n, p, p_stride, group, head_dim, out);
  }
}

float exp_shifted(float* s, int32_t n, float max) {
  const __m256 m = _mm256_set1_ps(max);
  __m256 sum = _mm256_setzero_ps();
  int32_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + j), m));  // -inf - max underflows to 0
    _mm256_storeu_ps(s + j, e);
    sum = _mm256_add_ps(sum, e);
  }
  float total = hsum(sum);
  for (; j < n; ++j) {
    s[j] = std::isinf(s[j]) ? 0.0f : std::exp(s[j] - max);
    total += s[j];
  }
  return total;
}

void f16_row_to_float(const uint8_t* src, float* dst, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, F16Row::load(src, i));
  for (; i < n; ++i) dst[i] = half_to_float(src + 2 * i);
}

void q8_0_row_to_float(const uint8_t* src, float* dst, int32_t n) {
  for (int32_t i = 0; i < n; i += 8) _mm256_storeu_ps(dst + i, Q8_0Row::load(src, i));
}

void float_row_to_f16(const float* src, uint8_t* dst, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) {
    const uint16_t h = fp32_to_fp16(src[i]);
    std::memcpy(dst + 2 * i, &h, 2);
  }
}

}  // namespace parley::avx2
