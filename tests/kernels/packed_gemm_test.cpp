// The packed int8 GEMM (packed_gemm.h), Q8_0, Q4_0, IQ4_XS and Q3_K: every
// path against the row-major scalar kernel (IQ4_XS, Q3_K: against the packed
// scalar kernel, which quantizes the activations in blocks of 32 where the
// row-major one takes 256, and that against the exact product) on shapes that are not multiples of the 16-row
// group or its 8-row half, the AVX2 kernel's 3-token tile and 64-token block,
// the VNNI kernel's 4-token tile and 96-token block, the AMX kernel's
// 16-token tile, or 64 columns, on one and several threads. Where the CPU has
// AMX, its int8 kernel takes Q8_0 from 8 tokens on and Q4_0 from 64, and the
// bf16 tile kernel both from 48 tokens; IQ4_XS and Q3_K stay on VNNI.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu.h"
#include "kernels/packed_gemm.h"
#include "kernels/quant.h"
#include "util/aligned_bytes.h"

namespace parley {
namespace {

struct Case {
  int64_t rows, cols, n_tokens;
};

class PackedGemmTest : public ::testing::TestWithParam<DType> {
 protected:
  bool bf16_seen = false;  // whether a case ran on the bf16 tiles

  void TearDown() override { set_active_isa(detect_isa()); }

  void check(Case c, ThreadPool& pool, unsigned seed) {
    const DType type = GetParam();
    c.cols = whole_blocks(type, c.cols);
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> src(size_t(c.rows * c.cols)), x(size_t(c.n_tokens * c.cols));
    for (auto& v : src) v = normal(rng);
    for (auto& v : x) v = normal(rng) * 2.0f;
    if (c.n_tokens > 2) std::fill(x.begin() + c.cols, x.begin() + 2 * c.cols, 0.0f);  // zero scales
    const uint64_t rb = row_bytes(type, uint64_t(c.cols));
    std::vector<uint8_t> w(rb * uint64_t(c.rows));
    std::vector<float> wf(src.size());  // the weights as stored
    for (int64_t r = 0; r < c.rows; ++r) {
      quantize_row(type, src.data() + r * c.cols, w.data() + r * rb, c.cols);
      dequantize_row(type, w.data() + r * rb, wf.data() + r * c.cols, c.cols);
    }
    MatrixView view{type, c.rows, c.cols, w.data()};
    AlignedBytes packed(packed_bytes(view));
    pack_matrix(view, packed.data());

    set_active_isa(Isa::Scalar);
    std::vector<float> ref(size_t(c.rows * c.n_tokens));
    const bool packed_ref = type == DType::IQ4_XS || type == DType::Q3_K;
    if (packed_ref) view.packed = packed.data();
    matmul(view, x.data(), ref.data(), c.n_tokens, pool);
    if (packed_ref) expect_within_activation_rounding(wf, x, ref, c);
    view.packed = packed.data();
    const std::string shape = std::string(dtype_name(type)) + " " + std::to_string(c.rows) + "x" +
                              std::to_string(c.cols) + " tokens " + std::to_string(c.n_tokens) + " threads " +
                              std::to_string(pool.size());
    for (const Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Vnni, Isa::Amx}) {
      if (!isa_supported(isa)) continue;
      set_active_isa(isa);
      std::vector<float> y(ref.size(), NAN);
      matmul(view, x.data(), y.data(), c.n_tokens, pool);
      // The bf16 tiles round weights and activations to 8 significant bits
      // each (2^-8 relative): compared with the exact product of the stored
      // weights and the float activations. The int8 paths agree with the
      // scalar kernel, which quantizes the activations the same way.
      const bool bf16 = packed_bf16_tiles(type, c.n_tokens);
      for (int64_t t = 0; t < c.n_tokens; ++t)
        for (int64_t r = 0; r < c.rows; ++r) {
          double mag = 0, exact = 0;
          for (int64_t k = 0; k < c.cols; ++k) {
            const double p = double(wf[size_t(r * c.cols + k)]) * x[size_t(t * c.cols + k)];
            mag += std::fabs(p), exact += p;
          }
          const size_t i = size_t(t * c.rows + r);
          const std::string where = shape + " path " + std::string(isa_name(isa)) + (bf16 ? " bf16" : "") +
                                    " token " + std::to_string(t) + " row " + std::to_string(r);
          if (bf16) ASSERT_NEAR(y[i], exact, 0x1.1p-7 * mag + 1e-6) << where;
          else ASSERT_NEAR(y[i], ref[i], 2e-5 * mag + 1e-6) << where;
        }
      bf16_seen |= bf16;
    }
  }

  // y against the exact product of the stored weights: within what rounding
  // each block of 32 activations to int8 (half a step of amax / 127) allows.
  static void expect_within_activation_rounding(const std::vector<float>& wf, const std::vector<float>& x,
                                                const std::vector<float>& y, const Case& c) {
    for (int64_t t = 0; t < c.n_tokens; ++t)
      for (int64_t r = 0; r < c.rows; ++r) {
        double exact = 0, bound = 1e-5;
        for (int64_t k0 = 0; k0 < c.cols; k0 += 32) {
          double amax = 0, wsum = 0;
          for (int64_t k = k0; k < k0 + 32; ++k) {
            exact += double(wf[size_t(r * c.cols + k)]) * x[size_t(t * c.cols + k)];
            amax = std::max(amax, double(std::fabs(x[size_t(t * c.cols + k)])));
            wsum += std::fabs(wf[size_t(r * c.cols + k)]);
          }
          bound += wsum * amax / 127 * (0.5 + 1e-4);
        }
        ASSERT_NEAR(y[size_t(t * c.rows + r)], exact, bound) << "token " << t << " row " << r;
      }
  }

  // The case's width rounded up to whole blocks of the type (256 for the K types).
  static int64_t whole_blocks(DType type, int64_t cols) {
    const int64_t block = int64_t(traits(type).block_elems);
    return (cols + block - 1) / block * block;
  }
};

TEST_P(PackedGemmTest, AgreesWithRowMajorKernels) {
  const Case cases[] = {{1, 32, 1},   {7, 96, 2},    {16, 64, 6},    {17, 352, 7}, {33, 32, 13},
                        {48, 768, 1}, {203, 160, 3}, {64, 2048, 17}, {5, 96, 12},  {31, 480, 25},
                        {40, 64, 203},  // spans token blocks
                        {17, 1024, 16}, {20, 96, 9},  {33, 224, 70},  // one AMX tile, a tail, Q4_0 on AMX
                        {37, 576, 300},  // bf16 tiles: several K slabs, an odd group, a token tail
                        {80, 96, 5}};    // a VNNI tile of 3 groups, then a pair
  ThreadPool one(1), three(3);
  unsigned seed = 1;
  for (const Case& c : cases) {
    check(c, one, seed++);
    check(c, three, seed++);
  }
  EXPECT_EQ(bf16_seen, isa_supported(Isa::Amx));
}

// As for the row-major kernels (matmul_test.cpp): a token's products are the
// same bits in any batch, on every int8 path (not the bf16 tiles, which only
// long prefills take).
TEST_P(PackedGemmTest, ATokensResultDoesNotDependOnItsBatch) {
  const DType type = GetParam();
  const int64_t rows = 45, cols = whole_blocks(type, 160), n = 11;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> src(size_t(rows * cols)), x(size_t(n * cols));
  for (auto& v : src) v = normal(rng);
  for (auto& v : x) v = normal(rng);
  const uint64_t rb = row_bytes(type, uint64_t(cols));
  std::vector<uint8_t> w(rb * uint64_t(rows));
  for (int64_t r = 0; r < rows; ++r) quantize_row(type, src.data() + r * cols, w.data() + r * rb, cols);
  MatrixView view{type, rows, cols, w.data()};
  AlignedBytes packed(packed_bytes(view));
  pack_matrix(view, packed.data());
  view.packed = packed.data();
  ThreadPool pool(1);
  for (const Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Vnni, Isa::Amx}) {
    if (!isa_supported(isa)) continue;
    set_active_isa(isa);
    std::vector<float> together(size_t(rows * n)), alone(static_cast<size_t>(rows));
    matmul(view, x.data(), together.data(), n, pool);
    for (int64_t t = 0; t < n; ++t) {
      matmul(view, x.data() + t * cols, alone.data(), 1, pool);
      for (int64_t r = 0; r < rows; ++r)
        ASSERT_EQ(alone[size_t(r)], together[size_t(t * rows + r)])
            << dtype_name(type) << " path " << isa_name(isa) << " token " << t << " row " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, PackedGemmTest,
                         ::testing::Values(DType::Q8_0, DType::Q4_0, DType::IQ4_XS, DType::Q3_K),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(PackedGemm, PacksQ8_0Q4_0IQ4_XSAndQ3_KOnEverySimdPath) {
  const MatrixView q8{DType::Q8_0, 16, 64, nullptr}, q4{DType::Q4_0, 16, 64, nullptr};
  const MatrixView q4k{DType::Q4_K, 16, 256, nullptr}, iq4{DType::IQ4_XS, 16, 256, nullptr},
      q3k{DType::Q3_K, 16, 256, nullptr};
  EXPECT_FALSE(packing_helps(q4k));
  set_active_isa(Isa::Scalar);
  EXPECT_FALSE(packing_helps(q8));
  set_active_isa(Isa::Avx2);
  EXPECT_TRUE(packing_helps(q8));
  EXPECT_TRUE(packing_helps(q4));
  EXPECT_TRUE(packing_helps(iq4));
  EXPECT_FALSE(packing_helps(q3k));  // Q3_K only where VNNI with GFNI runs it
  if (isa_supported(Isa::Vnni)) {
    set_active_isa(Isa::Vnni);
    EXPECT_EQ(packing_helps(q3k), has_gfni());
  }
  set_active_isa(detect_isa());
  // The file's bytes for whole groups of 16 rows and pairs of blocks; else
  // the last group and block are padded.
  EXPECT_EQ(packed_bytes({DType::Q8_0, 32, 64, nullptr}), 32u * 2 * 34);
  EXPECT_EQ(packed_bytes({DType::Q8_0, 17, 32, nullptr}), 32u * 2 * 34);
  EXPECT_EQ(packed_bytes({DType::Q4_0, 32, 64, nullptr}), 32u * 2 * 18);
  // IQ4_XS: 16 rows' super-block is their 16 x 136 bytes and a line of scales;
  // Q3_K: 16 x 110 bytes and 96 more (scales, padding).
  EXPECT_EQ(packed_bytes({DType::IQ4_XS, 17, 512, nullptr}), 2u * 2 * (16 * 136 + 64));
  EXPECT_EQ(packed_bytes({DType::Q3_K, 16, 256, nullptr}), 16u * 110 + 96);
}

}  // namespace
}  // namespace parley
