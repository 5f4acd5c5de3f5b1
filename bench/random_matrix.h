#pragma once
// A seeded random quantized matrix, packed for the int8 GEMM where this
// CPU's path packs, for the kernel benchmarks.
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/packed_gemm.h"
#include "kernels/quant.h"
#include "util/aligned_bytes.h"

struct RandomMatrix {
  std::vector<uint8_t> blocks;
  parley::AlignedBytes packed;
  parley::MatrixView view;
};

inline void fill_normal(std::vector<float>& v, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  for (auto& x : v) x = normal(rng);
}

inline RandomMatrix random_matrix(parley::DType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  using namespace parley;
  std::vector<float> src(size_t(rows * cols));
  fill_normal(src, rng);
  const uint64_t rb = row_bytes(type, uint64_t(cols));
  RandomMatrix m;
  m.blocks.resize(rb * uint64_t(rows));
  for (int64_t r = 0; r < rows; ++r) quantize_row(type, src.data() + r * cols, m.blocks.data() + r * rb, cols);
  m.view = MatrixView{type, rows, cols, m.blocks.data()};
  if (packing_helps(m.view)) {
    m.packed = AlignedBytes(packed_bytes(m.view));
    pack_matrix(m.view, m.packed.data());
    m.view.packed = m.packed.data();
  }
  return m;
}
