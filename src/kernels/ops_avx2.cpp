// AVX2 ops. Whole vectors use plain loads and stores; the tail uses masked
// ones, so every element goes through the same arithmetic (masked-off lanes
// load as zero). Masked stores only in the tail: on Zen 3/4 vmaskmovps to
// memory is microcoded, and a body of them ran 5x slower than plain stores.
#include "kernels/ops_avx2.h"

#include <immintrin.h>

#include <cmath>

#include "kernels/rope_pairs.h"
#include "kernels/simd_avx2.h"
#include "kernels/token_tiles.h"

namespace parley::avx2 {
namespace {

// Access to 8 whole lanes.
struct Whole {
  __m256 load(const float* p) const { return _mm256_loadu_ps(p); }
  void store(float* p, __m256 v) const { _mm256_storeu_ps(p, v); }
  __m256 keep(__m256 v, __m256) const { return v; }
};

// Access to the first `count` < 8 lanes.
struct Tail {
  __m256i mask;
  explicit Tail(int64_t count)
      : mask(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))) {}
  __m256 load(const float* p) const { return _mm256_maskload_ps(p, mask); }
  void store(float* p, __m256 v) const { _mm256_maskstore_ps(p, mask, v); }
  // v in the tail's lanes, `other` in the rest.
  __m256 keep(__m256 v, __m256 other) const { return _mm256_blendv_ps(other, v, _mm256_castsi256_ps(mask)); }
};

// Applies f(i, lanes) to 8 lanes at a time, lanes a Whole or, at the end, a Tail.
template <class F>
inline void for_lanes(int64_t n, F f) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) f(i, Whole{});
  if (i < n) f(i, Tail(n - i));
}

}  // namespace

// Two chains of FMAs, even and odd vectors, so one chain's latency hides the
// other's. Written out by pairs: an acc[k] indexed at run time kept both
// chains in memory (3x slower).
float dot(const float* a, const float* b, int64_t n) {
  __m256 even = _mm256_setzero_ps(), odd = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    even = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), even);
    odd = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), odd);
  }
  for_lanes(n - i, [&](int64_t j, auto l) {
    __m256& acc = j == 0 ? even : odd;
    acc = _mm256_fmadd_ps(l.load(a + i + j), l.load(b + i + j), acc);
  });
  return hsum(_mm256_add_ps(even, odd));
}

void axpy(float* y, float a, const float* x, int64_t n) {
  const __m256 va = _mm256_set1_ps(a);
  for_lanes(n, [&](int64_t i, auto l) { l.store(y + i, _mm256_fmadd_ps(va, l.load(x + i), l.load(y + i))); });
}

namespace {

// Rows of x as 8 floats at a time: F32, or F16 widened exactly.
struct F32Rows {
  const float* x;
  __m256 load8(int64_t i) const { return _mm256_loadu_ps(x + i); }
  float load1(int64_t i) const { return x[i]; }
};
struct F16Rows {
  const uint16_t* x;
  __m256 load8(int64_t i) const { return _mm256_cvtph_ps(load128(x + i)); }
  float load1(int64_t i) const { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(x[i]))); }
};

// R output rows by W vectors from column i: each load of x feeds R rows, and
// R * W accumulator chains keep both FMA units busy through their latency.
// The sum over k runs in order.
template <int R, int W, class Rows>
void axpy_tile(float* const* y, const float* const* a, Rows x, int64_t rows, int64_t stride, int64_t i) {
  __m256 acc[R][W];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) acc[r][w] = _mm256_loadu_ps(y[r] + i + 8 * w);
  for (int64_t k = 0; k < rows; ++k) {
    __m256 xv[W];
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) xv[w] = x.load8(k * stride + i + 8 * w);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 va = _mm256_set1_ps(a[r][k]);
#pragma GCC unroll 8
      for (int w = 0; w < W; ++w) acc[r][w] = _mm256_fmadd_ps(va, xv[w], acc[r][w]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) _mm256_storeu_ps(y[r] + i + 8 * w, acc[r][w]);
}

// The n columns of R rows: whole tiles of W vectors, single vectors, and
// fewer than 8 columns with the same fused multiply-adds one lane at a time.
template <int R, int W, class Rows>
void axpy_span(float* const* y, const float* const* a, Rows x, int64_t rows, int64_t stride, int64_t n) {
  int64_t i = 0;
  for (; i + 8 * W <= n; i += 8 * W) axpy_tile<R, W>(y, a, x, rows, stride, i);
  for (; i + 8 <= n; i += 8) axpy_tile<R, 1>(y, a, x, rows, stride, i);
  for (int r = 0; r < R; ++r)
    for (int64_t j = i; j < n; ++j) {
      float acc = y[r][j];
      for (int64_t k = 0; k < rows; ++k) acc = std::fma(a[r][k], x.load1(k * stride + j), acc);
      y[r][j] = acc;
    }
}

// Four rows at a time over their whole length (see ops_avx512.cpp); fewer
// rows take more vectors, to keep 8 chains in flight.
template <class Rows>
void axpy_rows_of(float* const* y, const float* const* a, int64_t m, Rows x, int64_t rows, int64_t stride,
                  int64_t n) {
  for_token_tiles<4>(m, [&]<int R>(int64_t t) { axpy_span<R, 8 / R>(y + t, a + t, x, rows, stride, n); });
}

}  // namespace

void axpy_rows(float* const* y, const float* const* a, int64_t m, const float* x, int64_t rows, int64_t stride,
               int64_t n) {
  axpy_rows_of(y, a, m, F32Rows{x}, rows, stride, n);
}

void axpy_rows_f16(float* const* y, const float* const* a, int64_t m, const uint16_t* x, int64_t rows, int64_t stride,
                   int64_t n) {
  axpy_rows_of(y, a, m, F16Rows{x}, rows, stride, n);
}

void add(float* y, const float* x, int64_t n) {
  for_lanes(n, [&](int64_t i, auto l) { l.store(y + i, _mm256_add_ps(l.load(y + i), l.load(x + i))); });
}

void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps) {
  const float mean = dot(x, x, n) / float(n) + eps;
  const float scale = 1.0f / _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(mean)));
  const __m256 vs = _mm256_set1_ps(scale);
  for_lanes(n, [&](int64_t i, auto l) {
    const __m256 v = _mm256_mul_ps(vs, l.load(x + i));
    l.store(out + i, weight ? _mm256_mul_ps(l.load(weight + i), v) : v);
  });
}

void softmax(float* x, int64_t n) {
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  for_lanes(n, [&](int64_t i, auto l) { vmax = _mm256_max_ps(vmax, l.keep(l.load(x + i), vmax)); });
  const __m256 max = _mm256_set1_ps(hmax(vmax));
  __m256 sum = _mm256_setzero_ps();
  for_lanes(n, [&](int64_t i, auto l) {
    const __m256 e = l.keep(exp8(_mm256_sub_ps(l.load(x + i), max)), _mm256_setzero_ps());
    sum = _mm256_add_ps(sum, e);
    l.store(x + i, e);
  });
  const __m256 inv = _mm256_set1_ps(1.0f / hsum(sum));
  for_lanes(n, [&](int64_t i, auto l) { l.store(x + i, _mm256_mul_ps(l.load(x + i), inv)); });
}

// vmaxps passes its second operand where the first is NaN, so NaNs drop out.
float max_of(const float* x, int64_t n) {
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  for_lanes(n, [&](int64_t i, auto l) { vmax = _mm256_max_ps(l.keep(l.load(x + i), vmax), vmax); });
  return hmax(vmax);
}

float sum(const float* x, int64_t n) {
  __m256 even = _mm256_setzero_ps(), odd = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    even = _mm256_add_ps(even, _mm256_loadu_ps(x + i));
    odd = _mm256_add_ps(odd, _mm256_loadu_ps(x + i + 8));
  }
  for_lanes(n - i, [&](int64_t j, auto l) { even = _mm256_add_ps(even, l.load(x + i + j)); });
  return hsum(_mm256_add_ps(even, odd));
}

// exp8 gives 0 from -inf (below its range); NaN lanes are cleared.
void exp_weights(const float* x, float shift, float temperature, float* w, int64_t n) {
  const __m256 s = _mm256_set1_ps(shift), t = _mm256_set1_ps(temperature);
  for_lanes(n, [&](int64_t i, auto l) {
    const __m256 v = l.load(x + i);
    const __m256 e = exp8(_mm256_div_ps(_mm256_sub_ps(v, s), t));
    l.store(w + i, _mm256_and_ps(e, _mm256_cmp_ps(v, v, _CMP_ORD_Q)));
  });
}

// The maximum first, then the first index holding it: two passes over a row
// of logits beat one whose every compare-and-branch depends on the last.
int64_t argmax(const float* x, int64_t n) {
  const float max = max_of(x, n);
  if (max == -INFINITY) return -1;
  const __m256 target = _mm256_set1_ps(max);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const int hits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), target, _CMP_EQ_OQ));
    if (hits) return i + __builtin_ctz(unsigned(hits));
  }
  for (; x[i] != max; ++i) {
  }
  return i;
}

// Products rounded, then added or subtracted: the portable loop's roundings
// (no FMA). Interleaved pairs go 4 to a vector with their cosines and sines
// duplicated, vaddsubps giving even lanes a c - b s and odd lanes b c + a s.
void rope_rotate(float* v, const float* cos, const float* sin, int64_t half, bool interleaved) {
  int64_t i = 0;
  if (interleaved) {
    const __m256i twice = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
    for (; i + 4 <= half; i += 4) {
      const __m256 c = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(cos + i)), twice);
      const __m256 s = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(sin + i)), twice);
      const __m256 ab = _mm256_loadu_ps(v + 2 * i);
      const __m256 ba = _mm256_permute_ps(ab, _MM_SHUFFLE(2, 3, 0, 1));
      _mm256_storeu_ps(v + 2 * i, _mm256_addsub_ps(_mm256_mul_ps(ab, c), _mm256_mul_ps(ba, s)));
    }
  } else {
    for (; i + 8 <= half; i += 8) {
      const __m256 c = _mm256_loadu_ps(cos + i), s = _mm256_loadu_ps(sin + i);
      const __m256 a = _mm256_loadu_ps(v + i), b = _mm256_loadu_ps(v + half + i);
      _mm256_storeu_ps(v + i, _mm256_sub_ps(_mm256_mul_ps(a, c), _mm256_mul_ps(b, s)));
      _mm256_storeu_ps(v + half + i, _mm256_add_ps(_mm256_mul_ps(a, s), _mm256_mul_ps(b, c)));
    }
  }
  rope_pairs(v, cos, sin, i, half, interleaved, half);
}

// tanh(x) = (e - 1) / (e + 1) with e = exp(2|x|), the sign put back: within
// about 1e-7 of tanh absolutely (what GELU's 1 + tanh and soft-capping need).
namespace {

__m256 tanh8(__m256 x) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  const __m256 ax = _mm256_andnot_ps(sign_bit, x);
  const __m256 e = exp8(_mm256_add_ps(ax, ax));
  const __m256 t = _mm256_div_ps(_mm256_sub_ps(e, one), _mm256_add_ps(e, one));
  return _mm256_or_ps(t, _mm256_and_ps(x, sign_bit));
}

}  // namespace

void geglu(float* gate, const float* up, int64_t n) {
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  const __m256 k = _mm256_set1_ps(0.7978845608028654f), c = _mm256_set1_ps(0.044715f);
  for_lanes(n, [&](int64_t i, auto l) {
    const __m256 x = l.load(gate + i);
    const __m256 inner = _mm256_mul_ps(k, _mm256_fmadd_ps(_mm256_mul_ps(c, x), _mm256_mul_ps(x, x), x));
    const __m256 gelu = _mm256_mul_ps(_mm256_mul_ps(half, x), _mm256_add_ps(one, tanh8(inner)));
    l.store(gate + i, _mm256_mul_ps(gelu, l.load(up + i)));
  });
}

void softcap(float* x, int64_t n, float cap) {
  const __m256 vcap = _mm256_set1_ps(cap), inv = _mm256_set1_ps(1.0f / cap);
  for_lanes(n, [&](int64_t i, auto l) { l.store(x + i, _mm256_mul_ps(vcap, tanh8(_mm256_mul_ps(l.load(x + i), inv)))); });
}

void swiglu(float* gate, const float* up, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  for_lanes(n, [&](int64_t i, auto l) {
    const __m256 g = l.load(gate + i);
    const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), g))));
    l.store(gate + i, _mm256_mul_ps(silu, l.load(up + i)));
  });
}

}  // namespace parley::avx2
