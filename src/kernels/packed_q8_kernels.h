#pragma once
// The per-ISA kernels behind packed_matmul() (see packed_q8.h for the layout).
#include <cstdint>

namespace parley {

constexpr int64_t kPackedQuantBytes = 16 * 32;  // one block of 16 rows
constexpr int64_t kPackedScaleBytes = 16 * 2;

struct PackedQ8 {
  const uint8_t* data;
  int64_t rows;
  int64_t blocks;        // 32-element blocks per row
  int64_t group_stride;  // bytes per group of 16 rows
  const uint8_t* group(int64_t g) const { return data + g * group_stride; }
  const uint8_t* scales(int64_t g) const { return group(g) + blocks * kPackedQuantBytes; }
};

// Quantized activations of n_tokens rows: q [token][blocks * 32], and per
// block the scale d and -128 * sum(q) (which cancels the +128 of the weights).
struct PackedActs {
  const int8_t* q;
  const float* d;
  const int32_t* neg_sum;
};

// y[t * rows + r] for the rows of groups [g0, g1) and every token.
using PackedKernel = void (*)(const PackedQ8& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1,
                              float* y);

void packed_kernel_scalar(const PackedQ8& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1, float* y);
void packed_kernel_vnni(const PackedQ8& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1, float* y);

}  // namespace parley
