// Packing Q8_0 and Q4_0 matrices for the integer GEMM, the scalar reference
// kernel and the dispatch (see packed_gemm.h).
#include "kernels/packed_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "kernels/acts.h"
#include "kernels/blocks.h"
#include "kernels/cpu.h"
#include "kernels/packed_gemm_kernels.h"
#include "kernels/stacked_ranges.h"
#include "util/error.h"
#include "util/fp16.h"

namespace parley {
namespace {

int64_t groups_of(const MatrixView& w) { return (w.rows + kPackRows - 1) / kPackRows; }

PackedMatrix packed_view(const MatrixView& w, const void* data) {
  return {static_cast<const uint8_t*>(data), w.rows, w.cols / kQK,
          w.type == DType::Q8_0 ? PackedFormat::kQ8 : PackedFormat::kQ4};
}

// Row r's block at `quants` (see packed_gemm.h): Q8_0 as q + 128, Q4_0 the
// file's nibble bytes; rows past the matrix hold zero weights (u = offset).
void pack_q8_block(const BlockQ8_0* blk, uint8_t* quants) {
  for (int k = 0; k < kQK; ++k) quants[(k / 4) * 64 + k % 4] = blk ? uint8_t(blk->qs[k] + 128) : 128;
}
void pack_q4_block(const BlockQ4_0* blk, uint8_t* quants) {
  for (int k = 0; k < kQK / 2; ++k) quants[(k / 4) * 64 + k % 4] = blk ? blk->qs[k] : 0x88;
}

void pack_group(const MatrixView& w, const PackedMatrix& layout, uint8_t* out, int64_t g) {
  for (int64_t r = 0; r < kPackRows; ++r) {
    const int64_t row = g * kPackRows + r;
    for (int64_t b = 0; b < layout.blocks; ++b) {
      uint8_t* quants = out + layout.quant_offset(g, b) + r * 4;
      const int64_t i = row * layout.blocks + b;
      uint16_t d = 0;
      if (layout.format == PackedFormat::kQ8) {
        const BlockQ8_0* blk = row < w.rows ? static_cast<const BlockQ8_0*>(w.data) + i : nullptr;
        pack_q8_block(blk, quants);
        if (blk) d = blk->d;
      } else {
        const BlockQ4_0* blk = row < w.rows ? static_cast<const BlockQ4_0*>(w.data) + i : nullptr;
        pack_q4_block(blk, quants);
        if (blk) d = blk->d;
      }
      std::memcpy(out + layout.scale_offset(g, b) + r * 2, &d, 2);
    }
  }
}

// Element k (unsigned, q + offset) of row r in a packed block.
int32_t packed_value(const PackedMatrix& w, const uint8_t* quants, int64_t r, int k) {
  if (w.format == PackedFormat::kQ8) return quants[(k / 4) * 64 + r * 4 + k % 4];
  const uint8_t byte = quants[((k % 16) / 4) * 64 + r * 4 + k % 4];
  return k < 16 ? byte & 15 : byte >> 4;
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
// PARLEY_AMX_MIN_TOKENS sets one threshold for both, for measuring.
int64_t amx_min_tokens(DType type) {
  static const int64_t forced = tokens_from_env("PARLEY_AMX_MIN_TOKENS", 0);
  if (forced) return forced;
  return type == DType::Q8_0 ? 8 : 64;
}

PackedKernel kernel_for(DType type, int64_t n_tokens) {
  const Isa isa = active_isa();
  if (isa >= Isa::Amx && n_tokens >= amx_min_tokens(type)) return packed_kernel_amx;
  if (isa >= Isa::Vnni) return packed_kernel_vnni;
  return isa >= Isa::Avx2 ? packed_kernel_avx2 : packed_kernel_scalar;
}

}  // namespace

bool packed_bf16_tiles(int64_t n_tokens) {
  // Measured crossover against the int8 tiles: docs/performance.md.
  static const int64_t min_tokens = tokens_from_env("PARLEY_AMX_BF16_MIN_TOKENS", 48);
  return active_isa() >= Isa::Amx && n_tokens >= min_tokens;
}

bool packing_helps(const MatrixView& w) {
  return (w.type == DType::Q8_0 || w.type == DType::Q4_0) && w.cols % kQK == 0 && w.rows > 0 &&
         active_isa() >= Isa::Avx2;
}

uint64_t packed_bytes(const MatrixView& w) {
  return uint64_t(groups_of(w)) * uint64_t(packed_view(w, nullptr).group_stride());
}

void pack_matrix(const MatrixView& w, uint8_t* out) {
  if ((w.type != DType::Q8_0 && w.type != DType::Q4_0) || w.cols % kQK != 0)
    throw Error("pack_matrix: not a Q8_0 or Q4_0 matrix of whole blocks");
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
          int32_t isum = -w.offset() * x.sum[t * w.blocks + b];
          for (int k = 0; k < kQK; ++k) isum += packed_value(w, w.quants(g, b), r, k) * xq[k];
          uint16_t d;
          std::memcpy(&d, w.scales(g, b) + r * 2, 2);
          sum += fp16_to_fp32(d) * x.d[t * w.blocks + b] * float(isum);
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
  if (packed_bf16_tiles(n_tokens)) {
    const Bf16Rows xb = bf16_rows_amx(x, w0.cols, n_tokens, pool);
    return each_range([&](const PackedMatrix& w, int64_t g0, int64_t g1, float* y) {
      packed_kernel_amx_bf16(w, xb, n_tokens, g0, g1, y);
    });
  }
  const Acts acts = prepare_acts(DType::Q8_0, x, w0.cols, n_tokens, pool);  // 8-bit blocks of 32 for both
  const PackedActs pa{acts.q, acts.d, acts.sums, acts.s};
  const PackedKernel kernel = kernel_for(w0.type, n_tokens);
  each_range([&](const PackedMatrix& w, int64_t g0, int64_t g1, float* y) { kernel(w, pa, n_tokens, g0, g1, y); });
}

}  // namespace parley
