#include "kernels/matmul.h"

#include <array>
#include <string>

#include "kernels/acts.h"
#include "kernels/cpu.h"
#include "kernels/matmul_kernels.h"
#include "kernels/packed_gemm.h"
#include "util/error.h"

namespace parley {
namespace {

constexpr size_t kTypeIds = 31;  // DType values are GGUF type ids < 31
constexpr size_t kIsas = 5;
using KernelTable = std::array<std::array<RowsKernel, kTypeIds>, kIsas>;

constexpr std::array<DType, 11> kAllTypes = {
    DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
    DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K};

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
  if (n_tokens <= 0 || w.rows <= 0) return;
  if (w.packed) return packed_matmul(w, x, y, n_tokens, pool);
  const RowsKernel kernel = kernel_for(active_isa(), w.type);
  const int block = traits(w.type).block_elems;
  if (w.cols <= 0 || w.cols % block != 0)
    throw Error("matmul: " + std::to_string(w.cols) + " columns are not a whole number of " +
                std::string(dtype_name(w.type)) + " blocks");
  const WeightRows rows{static_cast<const uint8_t*>(w.data), int64_t(row_bytes(w.type, uint64_t(w.cols))),
                        w.rows, w.cols};
  const Acts acts = prepare_acts(w.type, x, w.cols, n_tokens, pool);
  if (pool.size() == 1 || w.rows * w.cols * n_tokens < kMinParallelWork) {
    kernel(rows, acts, n_tokens, 0, w.rows, y);
    return;
  }
  pool.parallel_for_dynamic(
      w.rows, [&](int64_t r0, int64_t r1) { kernel(rows, acts, n_tokens, r0, r1, y); }, 4);
}

}  // namespace parley
