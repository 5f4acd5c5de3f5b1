#pragma once
// Row-by-row, token-tile driver shared by every matmul path: a weight row is
// loaded once per tile of up to T tokens (register blocking for prefill).
// A Dot provides `template <int N> void run(const uint8_t* row, int64_t t0,
// float* out) const` computing the row's dot with tokens t0 .. t0+N-1.
// Compiled into the per-ISA files, hence the internal linkage.
#include <cstdint>

#include "kernels/matmul_kernels.h"

namespace parley {
namespace {

template <int N, class Dot>
inline void run_tile(const Dot& dot, const WeightRows& w, const uint8_t* row, int64_t r,
                     int64_t t0, float* y) {
  float out[N];
  dot.template run<N>(row, t0, out);
  for (int i = 0; i < N; ++i) y[(t0 + i) * w.rows + r] = out[i];
}

template <int N, class Dot>
inline void run_tail(const Dot& dot, const WeightRows& w, const uint8_t* row, int64_t r,
                     int64_t t0, int64_t count, float* y) {
  if constexpr (N > 0) {
    if (count == N) run_tile<N>(dot, w, row, r, t0, y);
    else run_tail<N - 1>(dot, w, row, r, t0, count, y);
  }
}

template <int T, class Dot>
void run_rows(const Dot& dot, const WeightRows& w, int64_t n_tokens, int64_t r0, int64_t r1,
              float* y) {
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w.data + r * w.row_bytes;
    int64_t t = 0;
    for (; t + T <= n_tokens; t += T) run_tile<T>(dot, w, row, r, t, y);
    run_tail<T - 1>(dot, w, row, r, t, n_tokens - t, y);
  }
}

}  // namespace
}  // namespace parley
