// Packing Q8_0, Q4_0, IQ4_XS and Q3_K matrices for the integer GEMM, the scalar reference
// kernel and the dispatch (see packed_gemm.h).
#include "kernels/packed_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "kernels/acts.h"
#include "kernels/blocks.h"
#include "kernels/cpu.h"
#include "kernels/decode.h"
#include "kernels/packed_gemm_kernels.h"
#include "kernels/stacked_ranges.h"
#include "util/error.h"
#include "util/fp16.h"

namespace parley {
namespace {

int64_t groups_of(const MatrixView& w) { return (w.rows + kPackRows - 1) / kPackRows; }

PackedFormat packed_format(DType type) {
  switch (type) {
    case DType::Q8_0: return PackedFormat::kQ8;
    case DType::Q4_0: return PackedFormat::kQ4;
    case DType::IQ4_XS: return PackedFormat::kIQ4;
    default: return PackedFormat::kQ3;
  }
}

bool packs(DType type) {
  return type == DType::Q8_0 || type == DType::Q4_0 || type == DType::IQ4_XS || type == DType::Q3_K;
}

// The types whose per-block (sub-block) int8 scales the AMX tile kernels do not read.
bool vnni_only(DType type) { return type == DType::IQ4_XS || type == DType::Q3_K; }

PackedMatrix packed_view(const MatrixView& w, const void* data) {
  return {static_cast<const uint8_t*>(data), w.rows, w.cols / kQK, packed_format(w.type)};
}

// The pack_*() functions write row r of a group at `group` from the row's
// block(s) `blk` in the file, or zero weights where `blk` is null (rows past
// the matrix); see packed_gemm.h for the layouts.

void pack_nibbles(const uint8_t* qs, uint8_t* quants) {
  for (int k = 0; k < kQK / 2; ++k) quants[(k / 4) * 64 + k % 4] = qs ? qs[k] : 0x88;
}

// Block b: Q8_0 as q + 128, Q4_0 the file's nibble bytes, and their fp16 d.
void pack_q8_block(const BlockQ8_0* blk, const PackedMatrix& layout, uint8_t* group, int64_t b, int64_t r) {
  uint8_t* quants = group + layout.quant_offset(b) + r * 4;
  for (int k = 0; k < kQK; ++k) quants[(k / 4) * 64 + k % 4] = blk ? uint8_t(blk->qs[k] + 128) : 128;
  const uint16_t d = blk ? blk->d : 0;
  std::memcpy(group + layout.scale_offset(b) + r * 2, &d, 2);
}
void pack_q4_block(const BlockQ4_0* blk, const PackedMatrix& layout, uint8_t* group, int64_t b, int64_t r) {
  pack_nibbles(blk ? blk->qs : nullptr, group + layout.quant_offset(b) + r * 4);
  const uint16_t d = blk ? blk->d : 0;
  std::memcpy(group + layout.scale_offset(b) + r * 2, &d, 2);
}

// An IQ4_XS super-block (8 blocks from block b): its d, its block scales
// and its nibbles.
void pack_iq4_super(const BlockIQ4_XS* blk, const PackedMatrix& layout, uint8_t* group, int64_t b, int64_t r) {
  const uint16_t d = blk ? blk->d : 0;
  std::memcpy(group + layout.super_offset(b) + r * 2, &d, 2);
  for (int j = 0; j < 8; ++j) {
    group[layout.scale_offset(b + j) + r] = blk ? uint8_t(int8_t(iq4_xs_scale(*blk, j))) : 0;
    pack_nibbles(blk ? blk->qs + 16 * j : nullptr, group + layout.quant_offset(b + j) + r * 4);
  }
}

// A Q3_K super-block, as IQ4_XS's, but with two int8 scales a row and
// block (its sub-blocks', side by side) and its quants stored q + 4 (0..7),
// 3 bits: the row's byte i of the lines 0, 1, 2 of a block holds elements
// 4s + i, s = 0..7: s = 0..5 in bits 3(s % 2) .. +2 of line s / 2; s = 6
// and 7 their low two bits in bits 6, 7 of line s - 6 and their third bits
// in bits 6, 7 of line 2. One gf2p8affine reads a step of 16 rows from a line.
void pack_q3_super(const BlockQ3_K* blk, const PackedMatrix& layout, uint8_t* group, int64_t b, int64_t r) {
  BlockK k{};
  if (blk) decode_q3_k(reinterpret_cast<const uint8_t*>(blk), k);
  const uint16_t d = blk ? blk->d : 0;
  std::memcpy(group + layout.super_offset(b) + r * 2, &d, 2);
  for (int j = 0; j < 8; ++j) {
    uint8_t* scales = group + layout.scale_offset(b + j) + 2 * r;
    scales[0] = uint8_t(k.sc[2 * j]);
    scales[1] = uint8_t(k.sc[2 * j + 1]);
    uint8_t* quants = group + layout.quant_offset(b + j) + r * 4;
    for (int line = 0; line < 3; ++line) std::memset(quants + line * 64, 0, 4);
    for (int e = 0; e < kQK; ++e) {
      const int u = blk ? k.q[32 * j + e] + 4 : 0, s = e / 4;
      uint8_t* byte = quants + e % 4;
      if (s < 6) {
        byte[s / 2 * 64] = uint8_t(byte[s / 2 * 64] | u << 3 * (s % 2));
      } else {
        byte[(s - 6) * 64] = uint8_t(byte[(s - 6) * 64] | (u & 3) << 6);
        byte[128] = uint8_t(byte[128] | (u >> 2) << s);
      }
    }
  }
}

// Block i of type T of a row at `row` in the file, or null when `row` is.
template <class T>
const T* file_block(const uint8_t* row, int64_t i) {
  return row ? reinterpret_cast<const T*>(row) + i : nullptr;
}

void pack_group(const MatrixView& w, const PackedMatrix& layout, uint8_t* out, int64_t g) {
  uint8_t* group = out + g * layout.group_stride();
  const uint64_t bytes = row_bytes(w.type, uint64_t(w.cols));
  for (int64_t r = 0; r < kPackRows; ++r) {
    const int64_t row = g * kPackRows + r;
    const uint8_t* src = row < w.rows ? static_cast<const uint8_t*>(w.data) + uint64_t(row) * bytes : nullptr;
    for (int64_t b = 0; b < layout.blocks; b += layout.in_super_blocks() ? 8 : 1) {
      switch (layout.format) {
        case PackedFormat::kQ8: pack_q8_block(file_block<BlockQ8_0>(src, b), layout, group, b, r); break;
        case PackedFormat::kQ4: pack_q4_block(file_block<BlockQ4_0>(src, b), layout, group, b, r); break;
        case PackedFormat::kIQ4: pack_iq4_super(file_block<BlockIQ4_XS>(src, b / 8), layout, group, b, r); break;
        case PackedFormat::kQ3: pack_q3_super(file_block<BlockQ3_K>(src, b / 8), layout, group, b, r); break;
      }
    }
  }
}

// Element k (unsigned, q + offset) of row r in a packed block.
int32_t packed_value(const PackedMatrix& w, const uint8_t* quants, int64_t r, int k) {
  if (w.format == PackedFormat::kQ8) return quants[(k / 4) * 64 + r * 4 + k % 4];
  if (w.format == PackedFormat::kQ3) {
    const uint8_t* byte = quants + r * 4 + k % 4;
    const int s = k / 4;
    if (s < 6) return byte[s / 2 * 64] >> 3 * (s % 2) & 7;
    return byte[(s - 6) * 64] >> 6 | (byte[128] >> s & 1) << 2;
  }
  const uint8_t byte = quants[((k % 16) / 4) * 64 + r * 4 + k % 4];
  const int nibble = k < 16 ? byte & 15 : byte >> 4;
  return w.format == PackedFormat::kQ4 ? nibble : kIq4Values[nibble] + 128;
}

// Row r's scale of half h (elements 16h ..) of block b in group g.
float packed_scale(const PackedMatrix& w, int64_t g, int64_t b, int64_t r, int h) {
  uint16_t d;
  if (!w.in_super_blocks()) {
    std::memcpy(&d, w.scales(g, b) + r * 2, 2);
    return fp16_to_fp32(d);
  }
  std::memcpy(&d, w.super_scales(g, b) + r * 2, 2);
  const int64_t i = w.format == PackedFormat::kQ3 ? 2 * r + h : r;
  return fp16_to_fp32(d) * float(int8_t(w.scales(g, b)[i]));
}

constexpr int64_t kMinParallelWork = 1 << 16;

// A token-count threshold from the environment (for measuring), else `fallback`.
int64_t tokens_from_env(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::max<int64_t>(1, std::atoll(v)) : fallback;
}

// From this many tokens on, AMX int8 tiles beat vpdpbusd (docs/performance.md):
// 8 for Q8_0; Q4_0's nibbles must first be widened to bytes, which only long
// prefills repay. Below, a step is bound by reading its weights either way.
// PARLEY_AMX_MIN_TOKENS sets one threshold for both, for measuring. IQ4_XS
// and Q3_K have no tile kernel: VNNI takes every length.
int64_t amx_min_tokens(DType type) {
  static const int64_t forced = tokens_from_env("PARLEY_AMX_MIN_TOKENS", 0);
  if (forced) return forced;
  return type == DType::Q8_0 ? 8 : 64;
}

PackedKernel kernel_for(DType type, int64_t n_tokens) {
  const Isa isa = active_isa();
  if (isa >= Isa::Amx && !vnni_only(type) && n_tokens >= amx_min_tokens(type)) return packed_kernel_amx;
  if (isa >= Isa::Vnni && (type != DType::Q3_K || has_gfni())) return packed_kernel_vnni;
  // Q3_K reaches here only with a slower path forced after packing (tests).
  return isa >= Isa::Avx2 && type != DType::Q3_K ? packed_kernel_avx2 : packed_kernel_scalar;
}

}  // namespace

bool packed_bf16_tiles(DType type, int64_t n_tokens) {
  // Measured crossover against the int8 tiles: docs/performance.md.
  static const int64_t min_tokens = tokens_from_env("PARLEY_AMX_BF16_MIN_TOKENS", 48);
  return !vnni_only(type) && active_isa() >= Isa::Amx && n_tokens >= min_tokens;
}

bool packing_helps(const MatrixView& w) {
  if (w.type == DType::Q3_K && !(active_isa() >= Isa::Vnni && has_gfni())) return false;  // packed_gemm_q3_gfni.cpp
  return packs(w.type) && w.cols % kQK == 0 && w.rows > 0 && active_isa() >= Isa::Avx2;
}

uint64_t packed_bytes(const MatrixView& w) {
  return uint64_t(groups_of(w)) * uint64_t(packed_view(w, nullptr).group_stride());
}

void pack_matrix(const MatrixView& w, uint8_t* out) {
  if (!packs(w.type) || w.cols % kQK != 0)
    throw Error("pack_matrix: not a Q8_0, Q4_0, IQ4_XS or Q3_K matrix of whole blocks");
  const PackedMatrix layout = packed_view(w, out);
  for (int64_t g = 0; g < groups_of(w); ++g) pack_group(w, layout, out, g);
}

void packed_kernel_scalar(const PackedMatrix& w, const PackedActs& x, int64_t n_tokens, int64_t g0, int64_t g1,
                          float* y) {
  for (int64_t g = g0; g < g1; ++g)
    for (int64_t r = 0; r < kPackRows && g * kPackRows + r < w.rows; ++r)
      for (int64_t t = 0; t < n_tokens; ++t) {
        float sum = 0.0f;
        for (int64_t b = 0; b < w.blocks; ++b) {
          const int8_t* xq = x.q + (t * w.blocks + b) * kQK;
          int32_t isum[2] = {0, 0};  // of each half (Q3_K's sub-blocks)
          for (int k = 0; k < kQK; ++k) isum[k / 16] += (packed_value(w, w.quants(g, b), r, k) - w.offset()) * xq[k];
          sum += x.d[t * w.blocks + b] *
                 (packed_scale(w, g, b, r, 0) * float(isum[0]) + packed_scale(w, g, b, r, 1) * float(isum[1]));
        }
        y[t * w.rows + g * kPackRows + r] = sum;
      }
}

void packed_matmul(std::span<const MatmulOutput> outs, const float* x, int64_t n_tokens, ThreadPool& pool) {
  const MatrixView& w0 = *outs[0].w;
  StackedRanges groups(6);  // whole tiles of the VNNI (3 groups) and bf16 (2 groups) kernels
  int64_t rows = 0;
  for (const MatmulOutput& o : outs) {
    groups.add(groups_of(*o.w));
    rows += o.w->rows;
  }
  // kernel(w, g0, g1, y) over every matrix's groups, split over the pool.
  const auto each_range = [&](const auto& kernel) {
    const auto run = [&](int64_t g0, int64_t g1) {
      groups.split(g0, g1, [&](size_t i, int64_t b, int64_t e) {
        kernel(packed_view(*outs[i].w, outs[i].w->packed), b, e, outs[i].y);
      });
    };
    if (pool.size() == 1 || rows * w0.cols * n_tokens < kMinParallelWork) return run(0, groups.total());
    pool.parallel_for_dynamic(groups.total(), run, groups.grain());
  };
  if (packed_bf16_tiles(w0.type, n_tokens)) {
    const Bf16Rows xb = bf16_rows_amx(x, w0.cols, n_tokens, pool);
    return each_range([&](const PackedMatrix& w, int64_t g0, int64_t g1, float* y) {
      packed_kernel_amx_bf16(w, xb, n_tokens, g0, g1, y);
    });
  }
  // 8-bit blocks of 32 for every type; Q3_K's sub-blocks take 16-sums too.
  const Acts acts =
      prepare_acts(w0.type == DType::Q3_K ? ActFormat::Q8x32Sums16 : ActFormat::Q8x32, x, w0.cols, n_tokens, pool);
  const PackedActs pa{acts.q, acts.d, acts.sums, acts.s, acts.bsums};
  const PackedKernel kernel = kernel_for(w0.type, n_tokens);
  each_range([&](const PackedMatrix& w, int64_t g0, int64_t g1, float* y) { kernel(w, pa, n_tokens, g0, g1, y); });
}

}  // namespace parley
