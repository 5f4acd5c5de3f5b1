#pragma once
// Token tiles shared by the matmul drivers (tile.h) and the packed int8
// kernels (and the output-row tiles of axpy_rows, ops_avx*.cpp):
// tile.template operator()<NT>(t0) for n tokens, tiles of MaxNT then
// one tile of the rest, so each tile's size is known at compile time (its
// accumulators are registers). Every caller instantiates it with its own
// lambda, inside its own per-ISA file and flags.
#include <cstdint>

namespace parley {

template <int MaxNT, class Tile>
void for_token_tiles(int64_t n, const Tile& tile, int64_t t0 = 0) {
  static_assert(MaxNT >= 1);
  for (; n >= MaxNT; n -= MaxNT, t0 += MaxNT) tile.template operator()<MaxNT>(t0);
  if constexpr (MaxNT > 1)
    if (n > 0) for_token_tiles<MaxNT - 1>(n, tile, t0);
}

}  // namespace parley
