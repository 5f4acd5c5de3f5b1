#pragma once
// The per-ISA kernels behind packed_matmul() (see packed_q8.h for the layout).
#include <cstdint>

namespace parley {

constexpr int64_t kPackedQuantBytes = 16 * 32;  // one block of 16 rows
constexpr int64_t kPackedScaleBytes = 16 * 2;
// Blocks are stored in pairs, quants then scales: 17 cache lines, so a group
// is one sequential stream and every quant vector is aligned.
constexpr int64_t kPackedPairBytes = 2 * (kPackedQuantBytes + kPackedScaleBytes);

constexpr int64_t packed_group_stride(int64_t blocks) { return (blocks + 1) / 2 * kPackedPairBytes; }

struct PackedQ8 {
  const uint8_t* data;
  int64_t rows;
  int64_t blocks;  // 32-element blocks per row
  // Byte offsets of block b's quants and scales in group g.
  int64_t quant_offset(int64_t g, int64_t b) const {
    return g * packed_group_stride(blocks) + b / 2 * kPackedPairBytes + b % 2 * kPackedQuantBytes;
  }
  int64_t scale_offset(int64_t g, int64_t b) const {
    return g * packed_group_stride(blocks) + b / 2 * kPackedPairBytes + 2 * kPackedQuantBytes + b % 2 * kPackedScaleBytes;
  }
  const uint8_t* quants(int64_t g, int64_t b) const { return data + quant_offset(g, b); }
  const uint8_t* scales(int64_t g, int64_t b) const { return data + scale_offset(g, b); }
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
