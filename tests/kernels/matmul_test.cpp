// matmul: the scalar path against a double-precision product of the
// dequantized weights, and every ISA path this CPU has against the scalar one,
// for every weight type on odd shapes and token counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/blocks.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"

namespace parley {
namespace {

struct Problem {
  DType type;
  int64_t rows, cols, n_tokens;
  std::vector<uint8_t> w;
  std::vector<float> wf;  // dequantized weights
  std::vector<float> x;
};

Problem make_problem(DType type, int64_t rows, int64_t cols, int64_t n_tokens, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Problem p{type, rows, cols, n_tokens, {}, {}, {}};
  std::vector<float> src(size_t(rows * cols));
  for (auto& v : src) v = normal(rng);
  const uint64_t rb = row_bytes(type, uint64_t(cols));
  p.w.resize(rb * uint64_t(rows));
  p.wf.resize(src.size());
  for (int64_t r = 0; r < rows; ++r) {
    quantize_row(type, src.data() + r * cols, p.w.data() + uint64_t(r) * rb, cols);
    dequantize_row(type, p.w.data() + uint64_t(r) * rb, p.wf.data() + r * cols, cols);
  }
  p.x.resize(size_t(n_tokens * cols));
  for (auto& v : p.x) v = normal(rng) * 2.0f;
  if (n_tokens > 2)  // an all-zero token (zero activation scales)
    std::fill(p.x.begin() + cols, p.x.begin() + 2 * cols, 0.0f);
  return p;
}

std::vector<float> run(const Problem& p, Isa isa, ThreadPool& pool) {
  set_active_isa(isa);
  std::vector<float> y(size_t(p.rows * p.n_tokens), NAN);
  matmul({p.type, p.rows, p.cols, p.w.data()}, p.x.data(), y.data(), p.n_tokens, pool);
  return y;
}

// Activations are quantized to 8 bits per block of 32 (K types: 256) values:
// each is off by at most half a step, amax / 254.
int act_block(DType t) {
  if (t == DType::F32 || t == DType::F16 || t == DType::BF16) return 0;
  return traits(t).block_elems;
}

// Relative to sum |w * x|: summation order, and for BF16 weights on an
// AVX512-BF16 CPU the activations' rounding to bf16 (2^-9 each).
double path_tolerance(DType type, Isa isa) {
  if (type == DType::BF16 && isa >= Isa::Avx512 && has_avx512_bf16()) return 1.0 / 256;
  return 2e-5;
}

class MatmulTest : public ::testing::TestWithParam<DType> {
 protected:
  void TearDown() override { set_active_isa(detect_isa()); }

  void check(const Problem& p, ThreadPool& pool) {
    const std::string shape = std::string(dtype_name(p.type)) + " " + std::to_string(p.rows) +
                              "x" + std::to_string(p.cols) + " tokens " + std::to_string(p.n_tokens) +
                              " threads " + std::to_string(pool.size());
    const auto scalar = run(p, Isa::Scalar, pool);
    const int ab = act_block(p.type);
    for (int64_t t = 0; t < p.n_tokens; ++t) {
      const float* x = p.x.data() + t * p.cols;
      std::vector<double> half_step(size_t(p.cols), 0.0);
      for (int64_t c0 = 0; ab && c0 < p.cols; c0 += ab) {
        double amax = 0;
        for (int64_t c = c0; c < c0 + ab; ++c) amax = std::max(amax, double(std::fabs(x[c])));
        std::fill_n(half_step.begin() + c0, ab, amax / 254.0 * 1.001);
      }
      for (int64_t r = 0; r < p.rows; ++r) {
        const float* w = p.wf.data() + r * p.cols;
        double ref = 0, mag = 0, act_err = 0;
        for (int64_t c = 0; c < p.cols; ++c) {
          ref += double(w[c]) * x[c];
          mag += std::fabs(double(w[c]) * x[c]);
          act_err += std::fabs(double(w[c])) * half_step[size_t(c)];
        }
        const size_t i = size_t(t * p.rows + r);
        ASSERT_NEAR(scalar[i], ref, act_err + 2e-5 * mag + 1e-6) << shape << " token " << t << " row " << r;
      }
    }
    for (int i = int(Isa::Avx2); i <= int(Isa::Amx); ++i) {
      if (!isa_supported(Isa(i))) continue;
      const auto y = run(p, Isa(i), pool);
      for (int64_t t = 0; t < p.n_tokens; ++t)
        for (int64_t r = 0; r < p.rows; ++r) {
          const float* w = p.wf.data() + r * p.cols;
          const float* x = p.x.data() + t * p.cols;
          double mag = 0;
          for (int64_t c = 0; c < p.cols; ++c) mag += std::fabs(double(w[c]) * x[c]);
          const size_t k = size_t(t * p.rows + r);
          ASSERT_NEAR(y[k], scalar[k], path_tolerance(p.type, Isa(i)) * mag + 1e-6)
              << shape << " path " << isa_name(Isa(i)) << " token " << t << " row " << r;
        }
    }
  }
};

TEST_P(MatmulTest, PathsAgreeOnOddShapes) {
  const DType type = GetParam();
  const int block = traits(type).block_elems;
  // Float types take any width (SIMD tails); block types whole blocks, odd counts of them.
  const std::vector<int64_t> cols = block == 1     ? std::vector<int64_t>{37, 64, 200}
                                    : block == 32 ? std::vector<int64_t>{32, 96, 352}
                                                  : std::vector<int64_t>{256, 768};
  const int64_t rows[] = {1, 7, 33};
  const int64_t tokens[] = {1, 2, 3, 7, 17};
  ThreadPool one(1), three(3);
  unsigned seed = 1;
  for (const int64_t n : tokens)
    for (size_t i = 0; i < 3; ++i) {
      const auto p = make_problem(type, rows[i], cols[(i + size_t(n)) % cols.size()], n, seed++);
      check(p, seed % 2 ? one : three);
    }
}

// Large enough to be split over the pool, with a row count no grain divides;
// the last also quantizes its activations on the pool (prefill-sized).
TEST_P(MatmulTest, SplitOverThreads) {
  const DType type = GetParam();
  const int64_t cols = traits(type).block_elems == 256 ? 512 : 160;
  ThreadPool pool(4);
  check(make_problem(type, 203, cols, 3, 99), pool);
  check(make_problem(type, 509, cols, 1, 98), pool);
  check(make_problem(type, 37, 1024, 19, 97), pool);
}

// A token's products must be the same bits whatever else is in its batch:
// the engine promises a sequence the tokens it gets alone (a row's sum in
// another order would tip a close argmax). Each path, all tokens at once
// against each token alone.
TEST_P(MatmulTest, ATokensResultDoesNotDependOnItsBatch) {
  const DType type = GetParam();
  const int64_t cols = traits(type).block_elems == 256 ? 512 : 160;
  const Problem p = make_problem(type, 33, cols, 9, 7);
  ThreadPool pool(1);
  for (int i = int(Isa::Scalar); i <= int(Isa::Amx); ++i) {
    if (!isa_supported(Isa(i))) continue;
    const auto together = run(p, Isa(i), pool);
    for (int64_t t = 0; t < p.n_tokens; ++t) {
      std::vector<float> alone(size_t(p.rows));
      matmul({p.type, p.rows, p.cols, p.w.data()}, p.x.data() + t * p.cols, alone.data(), 1, pool);
      for (int64_t r = 0; r < p.rows; ++r)
        ASSERT_EQ(alone[size_t(r)], together[size_t(t * p.rows + r)])
            << dtype_name(type) << " path " << isa_name(Isa(i)) << " token " << t << " row " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, MatmulTest,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16, DType::Q8_0,
                                           DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                                           DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                                           DType::IQ4_NL, DType::IQ4_XS),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// IQ4_XS at the edges of what the kernels' integer sums hold: every weight
// at a codebook end (-127 or 113, nibbles 0 and 15), every scale at an end
// (ls 0 or 63), every activation at +-amax (quantized to +-127). The VNNI
// kernel adds 128 to the codebook (u8 up to 241); maddubs there would
// saturate.
class MatmulExtremes : public MatmulTest {};

TEST_F(MatmulExtremes, IQ4XSCodebookEnds) {
  const int64_t rows = 9, cols = 768, n_tokens = 5;
  Problem p{DType::IQ4_XS, rows, cols, n_tokens, {}, {}, {}};
  const uint64_t rb = row_bytes(p.type, uint64_t(cols));
  p.w.resize(rb * uint64_t(rows));
  std::mt19937 rng(5);
  for (size_t i = 0; i < p.w.size(); i += sizeof(BlockIQ4_XS)) {
    BlockIQ4_XS b;
    b.d = 0x2000;  // 2^-7
    b.scales_h = uint16_t(rng());  // top two bits of each ls: 0 or 3
    b.scales_h = uint16_t((b.scales_h & 0x5555) * 3);
    for (auto& l : b.scales_l) l = (rng() & 1 ? 0x0f : 0) | (rng() & 1 ? 0xf0 : 0);
    for (auto& q : b.qs) q = (rng() & 1 ? 0x0f : 0) | (rng() & 1 ? 0xf0 : 0);
    std::memcpy(p.w.data() + i, &b, sizeof(b));
  }
  p.wf.resize(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    dequantize_row(p.type, p.w.data() + uint64_t(r) * rb, p.wf.data() + r * cols, cols);
  p.x.resize(size_t(n_tokens * cols));
  for (auto& v : p.x) v = rng() & 1 ? 1.0f : -1.0f;
  ThreadPool pool(1);
  check(p, pool);
}

// The tests above check every path this CPU has; name the ones they skip.
TEST(Matmul, PathsThisCpuLacks) {
  std::string missing;
  for (int i = int(Isa::Avx2); i <= int(Isa::Amx); ++i)
    if (!isa_supported(Isa(i))) missing += " " + std::string(isa_name(Isa(i)));
  if (!missing.empty()) GTEST_SKIP() << "not checked on this CPU (no such path):" << missing;
}

TEST(Matmul, RejectsPartialBlocks) {
  ThreadPool pool(1);
  std::vector<uint8_t> w(1024);
  std::vector<float> x(48), y(2);
  EXPECT_THROW(matmul({DType::Q8_0, 2, 48, w.data()}, x.data(), y.data(), 1, pool), std::exception);
}

}  // namespace
}  // namespace parley
