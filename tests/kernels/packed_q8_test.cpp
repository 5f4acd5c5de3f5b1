// The packed Q8_0 GEMM (packed_q8.h): every path against the row-major scalar
// kernel on shapes that are not multiples of the 16-row group, the 6-token
// tile, the 96-token block or 64 columns, on one and several threads.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu.h"
#include "kernels/packed_q8.h"
#include "kernels/quant.h"
#include "util/aligned_bytes.h"

namespace parley {
namespace {

struct Case {
  int64_t rows, cols, n_tokens;
};

class PackedQ8Test : public ::testing::Test {
 protected:
  void TearDown() override { set_active_isa(detect_isa()); }

  void check(const Case& c, ThreadPool& pool, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> src(size_t(c.rows * c.cols)), x(size_t(c.n_tokens * c.cols));
    for (auto& v : src) v = normal(rng);
    for (auto& v : x) v = normal(rng) * 2.0f;
    if (c.n_tokens > 2) std::fill(x.begin() + c.cols, x.begin() + 2 * c.cols, 0.0f);  // zero scales
    const uint64_t rb = row_bytes(DType::Q8_0, uint64_t(c.cols));
    std::vector<uint8_t> w(rb * uint64_t(c.rows));
    for (int64_t r = 0; r < c.rows; ++r) quantize_row(DType::Q8_0, src.data() + r * c.cols, w.data() + r * rb, c.cols);
    MatrixView view{DType::Q8_0, c.rows, c.cols, w.data()};
    AlignedBytes packed(packed_bytes(view));
    pack_q8_0(view, packed.data());

    set_active_isa(Isa::Scalar);
    std::vector<float> ref(size_t(c.rows * c.n_tokens));
    matmul(view, x.data(), ref.data(), c.n_tokens, pool);
    view.packed = packed.data();
    const std::string shape = std::to_string(c.rows) + "x" + std::to_string(c.cols) + " tokens " +
                              std::to_string(c.n_tokens) + " threads " + std::to_string(pool.size());
    for (const Isa isa : {Isa::Scalar, Isa::Vnni, Isa::Amx}) {
      if (!isa_supported(isa)) continue;
      set_active_isa(isa);
      std::vector<float> y(ref.size(), NAN);
      matmul(view, x.data(), y.data(), c.n_tokens, pool);
      for (int64_t t = 0; t < c.n_tokens; ++t)
        for (int64_t r = 0; r < c.rows; ++r) {
          double mag = 0;
          for (int64_t k = 0; k < c.cols; ++k) mag += std::fabs(double(src[size_t(r * c.cols + k)]) * x[size_t(t * c.cols + k)]);
          const size_t i = size_t(t * c.rows + r);
          ASSERT_NEAR(y[i], ref[i], 2e-5 * mag + 1e-6) << shape << " path " << isa_name(isa) << " token " << t << " row " << r;
        }
    }
  }
};

TEST_F(PackedQ8Test, AgreesWithRowMajorKernels) {
  const Case cases[] = {{1, 32, 1},   {7, 96, 2},    {16, 64, 6},   {17, 352, 7},  {33, 32, 13},
                        {48, 768, 1}, {203, 160, 3}, {64, 2048, 17}, {5, 96, 12}, {31, 480, 25}, {40, 64, 203}};  // the last spans token blocks
  ThreadPool one(1), three(3);
  unsigned seed = 1;
  for (const Case& c : cases) {
    check(c, one, seed++);
    check(c, three, seed++);
  }
}

TEST(PackedQ8, PacksOnlyQ8_0OnAnInt8DotPath) {
  const MatrixView q8{DType::Q8_0, 16, 64, nullptr}, q4{DType::Q4_0, 16, 64, nullptr};
  EXPECT_FALSE(packing_helps(q4));
  set_active_isa(Isa::Avx2);
  EXPECT_FALSE(packing_helps(q8));
  set_active_isa(detect_isa());
  EXPECT_EQ(packing_helps(q8), detect_isa() >= Isa::Vnni);
  // The file's bytes for whole groups of 16 rows and pairs of blocks; else
  // the last group and block are padded.
  EXPECT_EQ(packed_bytes({DType::Q8_0, 32, 64, nullptr}), 32u * 2 * 34);
  EXPECT_EQ(packed_bytes({DType::Q8_0, 17, 32, nullptr}), 32u * 2 * 34);
}

}  // namespace
}  // namespace parley
