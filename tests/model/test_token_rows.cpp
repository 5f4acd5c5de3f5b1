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
      // `row` applied to each row of a copy of `start` must equal `rows` applied to another copy.
      const auto expect_rows = [&](const std::vector<float>& start, auto&& row, auto&& rows) {
        std::vector<float> want = start, got = start;
        for (int32_t t = 0; t < n; ++t) row(want.data() + size_t(t) * width, size_t(t) * width);
        rows(got.data());
        EXPECT_EQ(got, want);
      };
      expect_rows(
          std::vector<float>(size), [&](float* r, size_t at) { rmsnorm(r, x.data() + at, weight.data(), width, 1e-5f); },
          [&](float* g) { rmsnorm_rows(*pool, g, x.data(), weight.data(), n, width, 1e-5f); });
      expect_rows(
          y, [&](float* r, size_t at) { add(r, x.data() + at, width); },
          [&](float* g) { add_rows(*pool, g, x.data(), n, width); });
      expect_rows(
          y, [&](float* r, size_t) { add(r, weight.data(), width); },
          [&](float* g) { add_bias_rows(*pool, g, weight.data(), n, width); });
      expect_rows(
          y, [](float*, size_t) {}, [&](float* g) { add_bias_rows(*pool, g, nullptr, n, width); });  // no bias
      expect_rows(
          x, [&](float* r, size_t at) { swiglu(r, y.data() + at, width); },
          [&](float* g) { swiglu_rows(*pool, g, y.data(), n, width); });
    }
}

}  // namespace
}  // namespace parley
