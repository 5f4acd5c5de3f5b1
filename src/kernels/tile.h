#pragma once
// Row-by-row, token-tile driver shared by every matmul path: a weight row is
// loaded once per tile of up to T tokens (register blocking for prefill).
// A Dot provides either `template <int N> void run(const uint8_t* row, int64_t
// t0, float* out) const` computing the row's dot with tokens t0 .. t0+N-1, or
// `dot_rows<N, R>(rows, t0, outs)` doing R rows at once (each activation load
// then serves all R, and decode gets R independent chains) with
// `rows_per_pass<N>` its R for N tokens (rows left over run with R = 1). A Dot's result for a (row,
// token) must not depend on N or on R: a token's logits would otherwise
// change with the batch it is decoded in.
// Compiled into the per-ISA files, hence the internal linkage.
#include <cstdint>

#include "kernels/matmul_kernels.h"
#include "kernels/token_tiles.h"

namespace parley {
namespace {

template <class Dot>
concept HasRowGroups = requires { Dot::template rows_per_pass<1>; };

// Rows r .. r+R-1 against tokens t0 .. t0+N-1.
template <int N, int R, class Dot>
inline void run_tile(const Dot& dot, const WeightRows& w, int64_t r, int64_t t0, float* y) {
  float out[R][N];
  if constexpr (HasRowGroups<Dot>) {
    const uint8_t* rows[R];
    float* outs[R];
    for (int k = 0; k < R; ++k) {
      rows[k] = w.data + (r + k) * w.row_bytes;
      outs[k] = out[k];
    }
    dot.template dot_rows<N, R>(rows, t0, outs);
  } else {
    static_assert(R == 1, "a Dot without dot_rows runs one row at a time");
    dot.template run<N>(w.data + r * w.row_bytes, t0, out[0]);
  }
  for (int k = 0; k < R; ++k)
    for (int i = 0; i < N; ++i) y[(t0 + i) * w.rows + r + k] = out[k][i];
}

template <int T, int R, class Dot>
inline void run_tokens(const Dot& dot, const WeightRows& w, int64_t r, int64_t n_tokens, float* y) {
  for_token_tiles<T>(n_tokens, [&]<int N>(int64_t t0) { run_tile<N, R>(dot, w, r, t0, y); });
}

// Rows from r in groups of R while whole groups remain; returns the first row left.
template <int T, int R, class Dot>
inline int64_t run_groups(const Dot& dot, const WeightRows& w, int64_t n_tokens, int64_t r, int64_t r1, float* y) {
  for (; r + R <= r1; r += R) run_tokens<T, R>(dot, w, r, n_tokens, y);
  return r;
}

template <int T, class Dot>
void run_rows(const Dot& dot, const WeightRows& w, int64_t n_tokens, int64_t r0, int64_t r1, float* y) {
  int64_t r = r0;
  if constexpr (HasRowGroups<Dot>) {
    if (n_tokens == 1) r = run_groups<1, Dot::template rows_per_pass<1>>(dot, w, n_tokens, r, r1, y);
    else r = run_groups<T, Dot::template rows_per_pass<T>>(dot, w, n_tokens, r, r1, y);
  }
  for (; r < r1; ++r) run_tokens<T, 1>(dot, w, r, n_tokens, y);
}

}  // namespace
}  // namespace parley
