#include <gtest/gtest.h>

#include "loadtest/stats.h"

using namespace parley::loadtest;

TEST(Percentile, LinearInterpolationBetweenRanks) {
  const std::vector<double> v = {10, 20, 30, 40, 50};
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0), 10);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 50), 30);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 100), 50);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 90), 46);    // rank 3.6
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 99), 49.6);  // rank 3.96
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 12.5), 15);  // rank 0.5
}

TEST(Percentile, EdgeCases) {
  EXPECT_DOUBLE_EQ(percentile_sorted({}, 50), 0);
  EXPECT_DOUBLE_EQ(percentile_sorted({7}, 99), 7);
  EXPECT_DOUBLE_EQ(percentile_sorted({1, 3}, 50), 2);
}

TEST(Summary, OfAnUnsortedSample) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // 1..100, reversed
  const Summary s = summarize(v);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.p50, 50.5);
  EXPECT_DOUBLE_EQ(s.p90, 90.1);
  EXPECT_DOUBLE_EQ(s.p99, 99.01);
  const auto j = to_json(s);
  EXPECT_EQ(j["count"], 100);
  EXPECT_DOUBLE_EQ(j["p99"].get<double>(), 99.01);
}

TEST(Summary, Empty) {
  const Summary s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.p99, 0);
}
