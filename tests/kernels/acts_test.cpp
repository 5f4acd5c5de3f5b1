// Activation quantization: both implementations give identical bytes (every
// matmul path of a type must see the same activations), within half a step.
#include "kernels/acts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "kernels/cpu.h"

namespace parley {
namespace {

struct Quantized {
  std::vector<int8_t> q;
  std::vector<float> d, s;
  std::vector<int32_t> sums;
  std::vector<int16_t> bsums;
};

Quantized run(decltype(&quantize_acts) f, const std::vector<float>& x, int block) {
  const int64_t blocks = int64_t(x.size()) / block;
  Quantized r{std::vector<int8_t>(x.size()), std::vector<float>(size_t(blocks)), std::vector<float>(size_t(blocks)),
              std::vector<int32_t>(size_t(blocks)), std::vector<int16_t>(x.size() / 16)};
  const ActSums out{block == 32 ? r.s.data() : nullptr, block == 32 ? r.sums.data() : nullptr,
                    block == 256 ? r.bsums.data() : nullptr};
  f(x.data(), blocks, block, r.q.data(), r.d.data(), out);
  return r;
}

std::vector<float> test_input() {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> x(1024);
  for (auto& v : x) v = normal(rng);
  for (size_t i = 256; i < 288; ++i) x[i] = 0.0f;                 // an all-zero block
  for (size_t i = 512; i < 544; ++i) x[i] = float(int(i % 9) - 4) * 0.5f + 0.25f;  // ties at x * id
  x[544] = -127.0f;
  return x;
}

TEST(Acts, ScalarQuantizationWithinHalfStep) {
  const auto x = test_input();
  for (const int block : {32, 256}) {
    const auto r = run(quantize_acts, x, block);
    for (size_t i = 0; i < x.size(); ++i) {
      const float d = r.d[i / size_t(block)];
      ASSERT_LE(std::abs(r.q[i]), 127);
      ASSERT_LE(std::fabs(x[i] - d * float(r.q[i])), d * 0.5f * 1.0001f) << i;
    }
    for (size_t b = 0; block == 32 && b < r.s.size(); ++b) {
      int sum = 0;
      for (int i = 0; i < 32; ++i) sum += r.q[b * 32 + size_t(i)];
      EXPECT_EQ(r.s[b], r.d[b] * float(sum));
      EXPECT_EQ(r.sums[b], sum);
    }
    for (size_t j = 0; block == 256 && j < r.bsums.size(); ++j) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += r.q[j * 16 + size_t(i)];
      EXPECT_EQ(r.bsums[j], sum);
    }
  }
}

TEST(Acts, Avx2MatchesScalarExactly) {
  if (!isa_supported(Isa::Avx2)) GTEST_SKIP() << "no AVX2 on this CPU";
  const auto x = test_input();
  // 29 blocks of 32: the AVX2 loop takes 8 at a time, then one at a time.
  const std::vector<float> x29(x.begin(), x.begin() + 29 * 32);
  for (const auto& [block, in] : {std::pair{32, x}, std::pair{256, x}, std::pair{32, x29}}) {
    const auto a = run(quantize_acts, in, block), b = run(quantize_acts_avx2, in, block);
    EXPECT_EQ(a.q, b.q) << block;
    EXPECT_EQ(a.d, b.d) << block;
    EXPECT_EQ(a.s, b.s) << block;
    EXPECT_EQ(a.sums, b.sums) << block;
    EXPECT_EQ(a.bsums, b.bsums) << block;
  }
}

}  // namespace
}  // namespace parley
