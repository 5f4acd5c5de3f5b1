// AVX2 ops. Tails use masked loads and stores so every element goes through
// the same arithmetic (masked-off lanes load as zero).
#include "kernels/ops_avx2.h"

#include <immintrin.h>

#include <cmath>

#include "kernels/simd_avx2.h"

namespace parley::avx2 {
namespace {

// Lanes i < count (count may exceed 8).
inline __m256i first_lanes(int64_t count) {
  const int c = count < 8 ? int(count) : 8;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(c), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline __m256 load_part(const float* p, __m256i mask) { return _mm256_maskload_ps(p, mask); }

// Applies f to 8 lanes at a time: f(i, mask), mask all-ones but in the tail.
template <class F>
inline void for_lanes(int64_t n, F f) {
  const __m256i all = _mm256_set1_epi32(-1);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) f(i, all);
  if (i < n) f(i, first_lanes(n - i));
}

}  // namespace

float dot(const float* a, const float* b, int64_t n) {
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  int k = 0;
  for_lanes(n, [&](int64_t i, __m256i m) {
    acc[k] = _mm256_fmadd_ps(load_part(a + i, m), load_part(b + i, m), acc[k]);
    k ^= 1;
  });
  return hsum(_mm256_add_ps(acc[0], acc[1]));
}

void axpy(float* y, float a, const float* x, int64_t n) {
  const __m256 va = _mm256_set1_ps(a);
  for_lanes(n, [&](int64_t i, __m256i m) {
    _mm256_maskstore_ps(y + i, m, _mm256_fmadd_ps(va, load_part(x + i, m), load_part(y + i, m)));
  });
}

void add(float* y, const float* x, int64_t n) {
  for_lanes(n, [&](int64_t i, __m256i m) {
    _mm256_maskstore_ps(y + i, m, _mm256_add_ps(load_part(y + i, m), load_part(x + i, m)));
  });
}

void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps) {
  const float mean = dot(x, x, n) / float(n) + eps;
  const float scale = 1.0f / _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(mean)));
  const __m256 vs = _mm256_set1_ps(scale);
  for_lanes(n, [&](int64_t i, __m256i m) {
    const __m256 v = _mm256_mul_ps(vs, load_part(x + i, m));
    _mm256_maskstore_ps(out + i, m, weight ? _mm256_mul_ps(load_part(weight + i, m), v) : v);
  });
}

void softmax(float* x, int64_t n) {
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  for_lanes(n, [&](int64_t i, __m256i m) {
    const __m256 v = _mm256_blendv_ps(vmax, load_part(x + i, m), _mm256_castsi256_ps(m));
    vmax = _mm256_max_ps(vmax, v);
  });
  const __m256 max = _mm256_set1_ps(hmax(vmax));
  __m256 sum = _mm256_setzero_ps();
  for_lanes(n, [&](int64_t i, __m256i m) {
    const __m256 e = _mm256_and_ps(exp8(_mm256_sub_ps(load_part(x + i, m), max)), _mm256_castsi256_ps(m));
    sum = _mm256_add_ps(sum, e);
    _mm256_maskstore_ps(x + i, m, e);
  });
  const __m256 inv = _mm256_set1_ps(1.0f / hsum(sum));
  for_lanes(n, [&](int64_t i, __m256i m) {
    _mm256_maskstore_ps(x + i, m, _mm256_mul_ps(load_part(x + i, m), inv));
  });
}

void swiglu(float* gate, const float* up, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  for_lanes(n, [&](int64_t i, __m256i m) {
    const __m256 g = load_part(gate + i, m);
    const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), g))));
    _mm256_maskstore_ps(gate + i, m, _mm256_mul_ps(silu, load_part(up + i, m)));
  });
}

}  // namespace parley::avx2
