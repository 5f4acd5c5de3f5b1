// Portable ops, and the dispatch to their AVX2 (and AVX-512) versions.
// Reductions keep eight partial sums: more accurate than one running sum, and
// vectorisable.
#include "kernels/ops.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu.h"
#include "kernels/ops_avx2.h"
#include "kernels/ops_avx512.h"
#include "kernels/rope_pairs.h"
#include "util/fp16.h"

namespace parley {
namespace {

float sum8(const float* a, const float* b, int64_t n) {
  float part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) part[j] += a[i + j] * b[i + j];
  float sum = 0.0f;
  for (; i < n; ++i) sum += a[i] * b[i];
  for (float p : part) sum += p;
  return sum;
}

// axpy_rows' scalar path, x's values widened by `widen`.
template <class X, class Widen>
void axpy_rows_scalar(float* const* y, const float* const* a, int64_t m, const X* x, int64_t rows, int64_t stride,
                      int64_t n, Widen widen) {
  for (int64_t t = 0; t < m; ++t)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < n; ++i) y[t][i] += a[t][r] * widen(x[r * stride + i]);
}

}  // namespace

void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps) {
  if (use_avx2()) return avx2::rmsnorm(out, x, weight, n, eps);
  const float scale = 1.0f / std::sqrt(sum8(x, x, n) / float(n) + eps);
  for (int64_t i = 0; i < n; ++i) out[i] = (weight ? weight[i] : 1.0f) * (scale * x[i]);
}

void softmax(float* x, int64_t n) {
  if (n <= 0) return;
  if (use_avx2()) return avx2::softmax(x, n);
  const float max = *std::max_element(x, x + n);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void swiglu(float* gate, const float* up, int64_t n) {
  if (use_avx2()) return avx2::swiglu(gate, up, n);
  for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void add(float* y, const float* x, int64_t n) {
  if (use_avx2()) return avx2::add(y, x, n);
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

float dot(const float* a, const float* b, int64_t n) {
  if (use_avx2()) return avx2::dot(a, b, n);
  return sum8(a, b, n);
}

void axpy(float* y, float a, const float* x, int64_t n) {
  if (use_avx2()) return avx2::axpy(y, a, x, n);
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void axpy_rows(float* const* y, const float* const* a, int64_t m, const float* x, int64_t rows, int64_t stride,
               int64_t n) {
  if (active_isa() >= Isa::Avx512) return avx512::axpy_rows(y, a, m, x, rows, stride, n);
  if (use_avx2()) return avx2::axpy_rows(y, a, m, x, rows, stride, n);
  axpy_rows_scalar(y, a, m, x, rows, stride, n, [](float v) { return v; });
}

void axpy_rows_f16(float* const* y, const float* const* a, int64_t m, const uint16_t* x, int64_t rows, int64_t stride,
                   int64_t n) {
  if (active_isa() >= Isa::Avx512) return avx512::axpy_rows_f16(y, a, m, x, rows, stride, n);
  if (use_avx2()) return avx2::axpy_rows_f16(y, a, m, x, rows, stride, n);
  axpy_rows_scalar(y, a, m, x, rows, stride, n, fp16_to_fp32);
}

void rope_rotate(float* v, const float* cos, const float* sin, int64_t half, bool interleaved) {
  if (use_avx2()) return avx2::rope_rotate(v, cos, sin, half, interleaved);
  rope_pairs(v, cos, sin, 0, half, interleaved, half);
}

float max_of(const float* x, int64_t n) {
  if (use_avx2()) return avx2::max_of(x, n);
  float m = -INFINITY;
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

float sum(const float* x, int64_t n) {
  if (use_avx2()) return avx2::sum(x, n);
  float part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) part[j] += x[i + j];
  float total = 0.0f;
  for (; i < n; ++i) total += x[i];
  for (float p : part) total += p;
  return total;
}

void exp_weights(const float* x, float shift, float temperature, float* w, int64_t n) {
  if (use_avx2()) return avx2::exp_weights(x, shift, temperature, w, n);
  for (int64_t i = 0; i < n; ++i) w[i] = x[i] > -INFINITY ? std::exp((x[i] - shift) / temperature) : 0.0f;
}

int64_t argmax(const float* x, int64_t n) {
  if (use_avx2()) return avx2::argmax(x, n);
  int64_t best = -1;
  float best_value = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] > best_value) {
      best_value = x[i];
      best = i;
    }
  }
  return best;
}

}  // namespace parley
