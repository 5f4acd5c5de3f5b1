#pragma once
// The per-ISA kernels behind packed_matmul() (see packed_gemm.h for the layout).
#include <algorithm>
#include <cstdint>

#include "kernels/thread_pool.h"
#include "kernels/token_tiles.h"

namespace parley {

constexpr int64_t kPackedScaleBytes = 16 * 2;

enum class PackedFormat { kQ8, kQ4, kIQ4, kQ3 };

struct PackedMatrix {
  const uint8_t* data;
  int64_t rows;
  int64_t blocks;  // 32-element blocks per row
  PackedFormat format;

  // Quant bytes of one block of a group (16 rows x 32 bytes, x 16 for
  // nibbles, x 12 for Q3_K's 2 + 1 bits).
  int64_t quant_bytes() const {
    if (format == PackedFormat::kQ8) return 16 * 32;
    return format == PackedFormat::kQ3 ? 16 * 12 : 16 * 16;
  }
  // Q8_0 and Q4_0 blocks are stored in pairs, scales then quants (17 or 9
  // cache lines), so a group is one sequential stream and every quant vector
  // is aligned.
  int64_t pair_bytes() const { return 2 * (quant_bytes() + kPackedScaleBytes); }
  // IQ4_XS and Q3_K: in super-blocks of 8 blocks, scales (the rows' fp16 d,
  // then their int8 block or sub-block scales, padded to whole lines) then
  // quants.
  bool in_super_blocks() const { return format == PackedFormat::kIQ4 || format == PackedFormat::kQ3; }
  int64_t super_scale_bytes() const { return format == PackedFormat::kIQ4 ? 192 : 320; }
  int64_t super_bytes() const { return super_scale_bytes() + 8 * quant_bytes(); }
  int64_t group_stride() const {
    return in_super_blocks() ? blocks / 8 * super_bytes() : (blocks + 1) / 2 * pair_bytes();
  }
  // What the stored unsigned values exceed the signed quants by (IQ4_XS: the
  // codebook value + 128, after the lookup).
  int32_t offset() const {
    if (format == PackedFormat::kQ4) return 8;
    return format == PackedFormat::kQ3 ? 4 : 128;
  }

  // Byte offsets in a group of block b's quants and scales (IQ4_XS, Q3_K:
  // its int8 scales, Q3_K's two sub-block scales of a row side by side), and
  // of the fp16 d of the super-block holding it.
  int64_t quant_offset(int64_t b) const {
    if (in_super_blocks()) return super_offset(b) + super_scale_bytes() + b % 8 * quant_bytes();
    return b / 2 * pair_bytes() + 2 * kPackedScaleBytes + b % 2 * quant_bytes();
  }
  int64_t scale_offset(int64_t b) const {
    if (in_super_blocks()) return super_offset(b) + kPackedScaleBytes + b % 8 * (format == PackedFormat::kQ3 ? 32 : 16);
    return b / 2 * pair_bytes() + b % 2 * kPackedScaleBytes;
  }
  int64_t super_offset(int64_t b) const { return b / 8 * super_bytes(); }
  const uint8_t* group(int64_t g) const { return data + g * group_stride(); }
  const uint8_t* quants(int64_t g, int64_t b) const { return group(g) + quant_offset(b); }
  const uint8_t* scales(int64_t g, int64_t b) const { return group(g) + scale_offset(b); }
  const uint8_t* super_scales(int64_t g, int64_t b) const { return group(g) + super_offset(b); }
};

// Quantized activations of n_tokens rows: q [token][blocks * 32], and per
// block the scale d, sum(q) and d * sum(q) (-offset * sum(q) cancels the
// weights' offset); for Q3_K also the sums of q per 16 (its sub-blocks).
struct PackedActs {
  const int8_t* q;
  const float* d;
  const int32_t* sum;
  const float* s;
  const int16_t* sum16 = nullptr;

  // The same from token t0 on (`blocks` 32-element blocks per token).
  PackedActs from(int64_t t0, int64_t blocks) const {
    return {q + t0 * blocks * 32, d + t0 * blocks, sum + t0 * blocks, s + t0 * blocks,
            sum16 ? sum16 + t0 * blocks * 2 : nullptr};
  }
};

// kernel(acts, count, y) for blocks of up to `block` tokens: a long prefill
// goes through in blocks so that the activations a group reads stay in L2
// while its weights stay in L1. Instantiated by each per-ISA kernel file with
// its own lambda, as for_token_tiles is.
template <class Kernel>
void for_token_blocks(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t block, float* y,
                      const Kernel& kernel) {
  for (int64_t t0 = 0; t0 < n_tokens; t0 += block)
    kernel(x.from(t0, w.blocks), std::min(block, n_tokens - t0), y + t0 * w.rows);
}

// y[t * rows + r] for the rows of groups [g0, g1) and every token.
using PackedKernel = void (*)(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1,
                              float* y);

void packed_kernel_scalar(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1,
                          float* y);
void packed_kernel_avx2(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1, float* y);
void packed_kernel_vnni(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1, float* y);
// Q3_K's tiles for packed_kernel_vnni, one token block (the CPU must have GFNI: has_gfni()).
void packed_tiles_q3_gfni(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1,
                          float* y);
// Needs the tile permission (cpu.h requests it when it reports Isa::Amx).
void packed_kernel_amx(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1, float* y);

// Activations rounded to bf16 for the bf16 tile kernel, as A tiles:
// [token tile][block][token 0..15][32 bf16], each tile 1 KB contiguous, with
// zero rows after the last token up to a multiple of 32 (whole tile pairs).
struct Bf16Rows {
  const uint16_t* v;
  int64_t blocks;  // 32-element blocks per token
};
// x [n_tokens][cols] (cols a multiple of 32) into a buffer owned by the
// calling thread (grow-only), tokens split over the pool. Needs AMX (or AVX512-BF16).
Bf16Rows bf16_rows_amx(const float* x, int64_t cols, int64_t n_tokens, ThreadPool& pool);
// The same product on bf16 tiles: weights dequantized per group, fp32 sums.
void packed_kernel_amx_bf16(const PackedMatrix& w, const Bf16Rows& x, int64_t n_tokens, int64_t g0, int64_t g1,
                            float* y);

}  // namespace parley
