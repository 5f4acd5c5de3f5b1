#include "model/token_rows.h"

#include <cstddef>

#include "kernels/ops.h"
#include "kernels/tanh_ops.h"

namespace parley {
namespace {

// Below this many rows a step runs on the calling thread: waking the pool
// costs more than the rows (a decode step's handful of tokens).
constexpr int32_t kMinParallelRows = 16;

template <class F>
void for_rows(ThreadPool& pool, int32_t n, F&& row) {
  if (n < kMinParallelRows || pool.size() == 1) {
    for (int32_t t = 0; t < n; ++t) row(size_t(t));
    return;
  }
  pool.parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) row(size_t(t));
  });
}

}  // namespace

void rmsnorm_rows(ThreadPool& pool, float* out, const float* x, const float* weight, int32_t n, int32_t width,
                  float eps) {
  const size_t w = size_t(width);
  for_rows(pool, n, [&](size_t t) { rmsnorm(out + t * w, x + t * w, weight, width, eps); });
}

void add_rows(ThreadPool& pool, float* y, const float* x, int32_t n, int32_t width) {
  const size_t w = size_t(width);
  for_rows(pool, n, [&](size_t t) { add(y + t * w, x + t * w, width); });
}

void add_bias_rows(ThreadPool& pool, float* y, const float* bias, int32_t n, int32_t width) {
  if (!bias) return;
  const size_t w = size_t(width);
  for_rows(pool, n, [&](size_t t) { add(y + t * w, bias, width); });
}

void swiglu_rows(ThreadPool& pool, float* gate, const float* up, int32_t n, int32_t width) {
  const size_t w = size_t(width);
  for_rows(pool, n, [&](size_t t) { swiglu(gate + t * w, up + t * w, width); });
}

void geglu_rows(ThreadPool& pool, float* gate, const float* up, int32_t n, int32_t width) {
  const size_t w = size_t(width);
  for_rows(pool, n, [&](size_t t) { geglu(gate + t * w, up + t * w, width); });
}

}  // namespace parley
