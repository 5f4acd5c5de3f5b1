#pragma once
// Row-by-row, token-tile driver shared by every matmul path: a weight row is
// loaded once per tile of up to T tokens (register blocking for prefill).
// A Dot provides `template <int N> void run(const uint8_t* row, int64_t t0,
// float* out) const` computing the row's dot with tokens t0 .. t0+N-1, and
// may provide `run_pair<N>(row0, row1, t0, out0, out1)` doing two rows at once
// (each activation load then serves both), used for every pair of rows. A
// Dot's result for a (row, token) must not depend on N or on pairing: a
// token's logits would otherwise change with the batch it is decoded in.
// Compiled into the per-ISA files, hence the internal linkage.
#include <cstdint>

#include "kernels/matmul_kernels.h"

namespace parley {
namespace {

template <class Dot, int N>
concept HasRunPair = requires(const Dot& d, const uint8_t* p, float* o) {
  d.template run_pair<N>(p, p, int64_t(0), o, o);
};

// Rows r (and r + 1 when Pair) against tokens t0 .. t0+N-1.
template <int N, bool Pair, class Dot>
inline void run_tile(const Dot& dot, const WeightRows& w, int64_t r, int64_t t0, float* y) {
  const uint8_t* row = w.data + r * w.row_bytes;
  float out[2][N];
  if constexpr (Pair) dot.template run_pair<N>(row, row + w.row_bytes, t0, out[0], out[1]);
  else dot.template run<N>(row, t0, out[0]);
  for (int k = 0; k < (Pair ? 2 : 1); ++k)
    for (int i = 0; i < N; ++i) y[(t0 + i) * w.rows + r + k] = out[k][i];
}

template <int N, bool Pair, class Dot>
inline void run_tail(const Dot& dot, const WeightRows& w, int64_t r, int64_t t0, int64_t count, float* y) {
  if constexpr (N > 0) {
    if (count == N) run_tile<N, Pair>(dot, w, r, t0, y);
    else run_tail<N - 1, Pair>(dot, w, r, t0, count, y);
  }
}

template <int T, bool Pair, class Dot>
inline void run_tokens(const Dot& dot, const WeightRows& w, int64_t r, int64_t n_tokens, float* y) {
  int64_t t = 0;
  for (; t + T <= n_tokens; t += T) run_tile<T, Pair>(dot, w, r, t, y);
  run_tail<T - 1, Pair>(dot, w, r, t, n_tokens - t, y);
}

template <int T, class Dot>
void run_rows(const Dot& dot, const WeightRows& w, int64_t n_tokens, int64_t r0, int64_t r1, float* y) {
  int64_t r = r0;
  if constexpr (HasRunPair<Dot, T>)
    for (; r + 2 <= r1; r += 2) run_tokens<T, true>(dot, w, r, n_tokens, y);
  for (; r < r1; ++r) run_tokens<T, false>(dot, w, r, n_tokens, y);
}

}  // namespace
}  // namespace parley
