// The row-wise steps of the forward pass (token_rows.h) give, row for row,
// exactly what the single-row kernels give, on one thread and split over a
// pool (from 16 rows on), with and without a bias.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/ops.h"
#include "model/token_rows.h"

namespace parley {
namespace {

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

TEST(TokenRows, MatchTheRowKernelsOnAnyPool) {
  constexpr int32_t width = 72;
  ThreadPool one(1), three(3);
  for (ThreadPool* pool : {&one, &three})
    for (const int32_t n : {1, 15, 16, 41}) {
      SCOPED_TRACE(std::to_string(n) + " rows, " + std::to_string(pool->size()) + " threads");
      const size_t size = size_t(n) * width;
      const auto x = random_values(size, 1), y = random_values(size, 2), weight = random_values(width, 3);
      std::vector<float> want(size), got(size);

      for (int32_t t = 0; t < n; ++t) rmsnorm(want.data() + t * width, x.data() + t * width, weight.data(), width, 1e-5f);
      rmsnorm_rows(*pool, got.data(), x.data(), weight.data(), n, width, 1e-5f);
      EXPECT_EQ(got, want);

      want = y;
      got = y;
      for (int32_t t = 0; t < n; ++t) add(want.data() + t * width, x.data() + t * width, width);
      add_rows(*pool, got.data(), x.data(), n, width);
      EXPECT_EQ(got, want);

      want = y;
      got = y;
      for (int32_t t = 0; t < n; ++t) add(want.data() + t * width, weight.data(), width);
      add_bias_rows(*pool, got.data(), weight.data(), n, width);
      EXPECT_EQ(got, want);
      add_bias_rows(*pool, got.data(), nullptr, n, width);  // no bias: unchanged
      EXPECT_EQ(got, want);

      want = x;
      got = x;
      for (int32_t t = 0; t < n; ++t) swiglu(want.data() + t * width, y.data() + t * width, width);
      swiglu_rows(*pool, got.data(), y.data(), n, width);
      EXPECT_EQ(got, want);
    }
}

}  // namespace
}  // namespace parley
