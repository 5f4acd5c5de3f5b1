#include <gtest/gtest.h>

#include <cmath>

#include "loadtest/arrivals.h"
#include "util/error.h"

using parley::loadtest::PoissonArrivals;

TEST(PoissonArrivals, MeanGapAndVariance) {
  PoissonArrivals a(4.0, 7);  // mean gap 0.25 s; exponential: sd = mean
  const int n = 200000;
  double sum = 0, sum_sq = 0;
  int within_mean = 0;
  for (int i = 0; i < n; ++i) {
    const double g = a.next_gap();
    ASSERT_GT(g, 0);
    sum += g;
    sum_sq += g * g;
    within_mean += g < 0.25;
  }
  const double mean = sum / n, var = sum_sq / n - mean * mean;
  EXPECT_NEAR(mean, 0.25, 0.005);
  EXPECT_NEAR(std::sqrt(var), 0.25, 0.005);
  EXPECT_NEAR(double(within_mean) / n, 1 - std::exp(-1.0), 0.01);  // P(gap < mean) = 1 - 1/e
}

TEST(PoissonArrivals, CountsPerSecondArePoisson) {
  PoissonArrivals a(10.0, 3);
  // Arrivals in each of 2000 one-second windows: mean = variance = 10.
  std::vector<int> counts(2000);
  double t = 0;
  for (;;) {
    t += a.next_gap();
    if (t >= double(counts.size())) break;
    ++counts[size_t(t)];
  }
  double mean = 0, var = 0;
  for (int c : counts) mean += c;
  mean /= double(counts.size());
  for (int c : counts) var += (c - mean) * (c - mean);
  var /= double(counts.size());
  EXPECT_NEAR(mean, 10, 0.3);
  EXPECT_NEAR(var, 10, 1.0);
}

TEST(PoissonArrivals, SeededAndReproducible) {
  PoissonArrivals a(2, 11), b(2, 11), c(2, 12);
  bool differs = false;
  for (int i = 0; i < 10; ++i) {
    const double x = a.next_gap();
    EXPECT_EQ(x, b.next_gap());
    differs |= x != c.next_gap();
  }
  EXPECT_TRUE(differs);
}

TEST(PoissonArrivals, RateMustBePositive) {
  EXPECT_THROW(PoissonArrivals(0, 1), parley::Error);
  EXPECT_THROW(PoissonArrivals(-1, 1), parley::Error);
}
