#pragma once
// rope_rotate()'s arithmetic on pairs i0 .. i1 - 1 (ops.h), for the portable
// path and the vector paths' tails. Internal linkage: each per-ISA file gets
// its own copy compiled with its flags.
#include <cstdint>

namespace parley {
namespace {

inline void rope_pairs(float* v, const float* cos, const float* sin, int64_t i0, int64_t i1, bool interleaved,
                       int64_t half) {
  for (int64_t i = i0; i < i1; ++i) {
    float& a = v[interleaved ? 2 * i : i];
    float& b = v[interleaved ? 2 * i + 1 : i + half];
    const float x0 = a, x1 = b;
    a = x0 * cos[i] - x1 * sin[i];
    b = x0 * sin[i] + x1 * cos[i];
  }
}

}  // namespace
}  // namespace parley
