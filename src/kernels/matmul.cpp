#include "kernels/matmul.h"

#include <array>
#include <string>

#include "kernels/acts.h"
#include "kernels/cpu.h"
#include "kernels/matmul_kernels.h"
#include "kernels/packed_gemm.h"
#include "kernels/stacked_ranges.h"
#include "util/error.h"

namespace parley {
namespace {

constexpr size_t kTypeIds = 31;  // DType values are GGUF type ids < 31
constexpr size_t kIsas = 5;
using KernelTable = std::array<std::array<RowsKernel, kTypeIds>, kIsas>;

constexpr std::array<DType, 15> kAllTypes = {
    DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0,   DType::Q4_1,   DType::Q5_0, DType::Q5_1,
    DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS};

// Each path's kernel, or the best lower path's where it has none (AMX has no
// kernels of its own yet and runs the VNNI ones).
KernelTable build_table() {
  constexpr std::array<RowsKernel (*)(DType), kIsas> own = {
      scalar_kernel, avx2_kernel, avx512_kernel, vnni_kernel, nullptr};
  KernelTable table{};
  for (const DType type : kAllTypes) {
    const auto id = size_t(type);
    for (size_t isa = 0; isa < kIsas; ++isa) {
      // Only a path the CPU has is asked: its code is compiled for that ISA.
      const RowsKernel k = own[isa] && isa_supported(Isa(isa)) ? own[isa](type) : nullptr;
      table[isa][id] = k ? k : table[isa - 1][id];
    }
  }
  if (has_avx512_bf16())
    for (size_t isa = size_t(Isa::Avx512); isa < kIsas; ++isa) table[isa][size_t(DType::BF16)] = bf16_kernel(DType::BF16);
  return table;
}

RowsKernel kernel_for(Isa isa, DType type) {
  static const KernelTable table = build_table();
  const auto id = size_t(type);
  const RowsKernel k = id < kTypeIds ? table[size_t(isa)][id] : nullptr;
  if (!k) throw Error("matmul: unsupported weight type id " + std::to_string(id));
  return k;
}

// Below this many multiply-adds a call runs on the calling thread alone: waking
// the pool would cost more than it saves.
constexpr int64_t kMinParallelWork = 1 << 16;

}  // namespace

void matmul(const MatrixView& w, const float* x, float* y, int64_t n_tokens, ThreadPool& pool) {
  const MatmulOutput out{&w, y};
  matmul_shared({&out, 1}, x, n_tokens, pool);
}

void matmul_float_rows(const MatrixView& w, const float* x, float* y, int64_t n_tokens, int64_t r0, int64_t r1) {
  if (act_format(w.type) != ActFormat::Float) throw Error("matmul_float_rows: float weights only");
  Acts acts;
  acts.cols = w.cols;
  acts.f = x;
  const WeightRows rows{static_cast<const uint8_t*>(w.data), int64_t(row_bytes(w.type, uint64_t(w.cols))), w.rows, w.cols};
  kernel_for(active_isa(), w.type)(rows, acts, n_tokens, r0, r1, y);
}

void matmul_shared(std::span<const MatmulOutput> outs, const float* x, int64_t n_tokens, ThreadPool& pool) {
  if (n_tokens <= 0 || outs.empty()) return;
  if (outs.size() > kMaxStacked) throw Error("matmul_shared: more than 4 matrices");
  const MatrixView& w0 = *outs[0].w;
  for (const MatmulOutput& o : outs)
    if (o.w->type != w0.type || o.w->cols != w0.cols || !o.w->packed != !w0.packed) {
      for (const MatmulOutput& one : outs) matmul_shared({&one, 1}, x, n_tokens, pool);
      return;
    }
  if (w0.packed) return packed_matmul(outs, x, n_tokens, pool);
  const RowsKernel kernel = kernel_for(active_isa(), w0.type);
  const int block = traits(w0.type).block_elems;
  if (w0.cols <= 0 || w0.cols % block != 0)
    throw Error("matmul: " + std::to_string(w0.cols) + " columns are not a whole number of " +
                std::string(dtype_name(w0.type)) + " blocks");
  const int64_t bytes = int64_t(row_bytes(w0.type, uint64_t(w0.cols)));
  StackedRanges rows(4);
  for (const MatmulOutput& o : outs) rows.add(o.w->rows);
  if (rows.total() <= 0) return;
  const Acts acts = prepare_acts(w0.type, x, w0.cols, n_tokens, pool);
  const auto run = [&](int64_t r0, int64_t r1) {
    rows.split(r0, r1, [&](size_t i, int64_t b, int64_t e) {
      const MatrixView& w = *outs[i].w;
      kernel(WeightRows{static_cast<const uint8_t*>(w.data), bytes, w.rows, w.cols}, acts, n_tokens, b, e, outs[i].y);
    });
  };
  if (pool.size() == 1 || rows.total() * w0.cols * n_tokens < kMinParallelWork) return run(0, rows.total());
  pool.parallel_for_dynamic(rows.total(), run, rows.grain());
}

}  // namespace parley
