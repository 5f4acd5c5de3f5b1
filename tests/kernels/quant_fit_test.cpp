// The low-bit quantizers' scale searches: never worse than scaling the
// largest value onto the grid's end, and exact on values already on a grid.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/quant_fit.h"

namespace parley {
namespace {

constexpr int8_t kQ3[8] = {-4, -3, -2, -1, 0, 1, 2, 3};
constexpr int8_t kIq4[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

double level_error(const std::vector<float>& x, const std::vector<float>& w, const Levels& levels, float d) {
  double err = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = d != 0.0f ? levels.value(levels.nearest(x[i] / d)) * d : 0.0f;
    err += w[i] * (x[i] - v) * (x[i] - v);
  }
  return err;
}

TEST(QuantFit, NearestLevel) {
  const Levels levels(kIq4, 16);
  EXPECT_EQ(levels.nearest(-1000.0f), 0);
  EXPECT_EQ(levels.nearest(1000.0f), 15);
  EXPECT_EQ(levels.nearest(0.0f), 8);   // 1 is nearer than -10
  EXPECT_EQ(levels.nearest(-5.0f), 7);  // -10 nearer than 1
  EXPECT_EQ(levels.nearest(100.0f), 14);
  EXPECT_EQ(levels.nearest(101.0f), 15);  // ties go up, as the midpoint 101 belongs to 113
  EXPECT_EQ(levels.nearest(100.99f), 14);
  // Against a plain search over a fine sweep, for both level sets.
  for (const auto& [values, count] : {std::pair{kQ3, 8}, std::pair{kIq4, 16}}) {
    const Levels l(values, count);
    for (float v = -140.0f; v <= 140.0f; v += 0.0625f) {
      int best = 0;
      for (int i = 1; i < count; ++i)
        if (std::fabs(v - float(values[i])) <= std::fabs(v - float(values[best]))) best = i;
      ASSERT_EQ(l.nearest(v), best) << v;
    }
  }
}

TEST(QuantFit, LevelsBeatMaxScaling) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const auto& [values, count] : {std::pair{kQ3, 8}, std::pair{kIq4, 16}}) {
    const Levels levels(values, count);
    double fitted = 0, naive = 0;
    for (int g = 0; g < 200; ++g) {
      std::vector<float> x(32), w(32);
      for (auto& v : x) v = normal(rng) * (g % 7 == 0 ? 4.0f : 1.0f);
      fit_weights(x.data(), 32, w.data());
      float max = 0.0f;
      for (float v : x) max = std::fabs(v) > std::fabs(max) ? v : max;
      const double e_fit = level_error(x, w, levels, fit_levels(x.data(), w.data(), 32, levels));
      const double e_max = level_error(x, w, levels, max / levels.value(0));
      EXPECT_LE(e_fit, e_max * 1.0001) << count << " levels, group " << g;
      fitted += e_fit;
      naive += e_max;
    }
    EXPECT_LT(fitted, 0.9 * naive) << count << " levels";  // a real gain over all groups
  }
}

TEST(QuantFit, GridValuesFitExactly) {
  const Levels levels(kQ3, 8);
  std::vector<float> x(16), w(16);
  for (int i = 0; i < 16; ++i) x[size_t(i)] = 0.5f * float(i % 8 - 4);
  fit_weights(x.data(), 16, w.data());
  const float d = fit_levels(x.data(), w.data(), 16, levels);
  EXPECT_FLOAT_EQ(d, 0.5f);
  float scale = 0, min = 0;
  std::vector<float> y(16);
  for (int i = 0; i < 16; ++i) y[size_t(i)] = 0.25f * float(i % 4) - 0.5f;  // 2-bit affine grid
  fit_affine(y.data(), w.data(), 16, 3, scale, min);
  EXPECT_NEAR(scale, 0.25f, 1e-6f);
  EXPECT_NEAR(min, 0.5f, 1e-6f);
}

TEST(QuantFit, ZerosFitToZero) {
  const Levels levels(kIq4, 16);
  std::vector<float> x(32, 0.0f), w(32, 1.0f);
  EXPECT_EQ(fit_levels(x.data(), w.data(), 32, levels), 0.0f);
  float scale = 1, min = 1;
  fit_affine(x.data(), w.data(), 32, 3, scale, min);
  EXPECT_EQ(scale, 0.0f);
  EXPECT_EQ(min, 0.0f);
}

}  // namespace
}  // namespace parley
