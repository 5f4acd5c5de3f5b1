#include "obs/histogram.h"

#include <gtest/gtest.h>
#include <cmath>
#include <thread>

namespace parley::obs {
namespace {

TEST(Histogram, QuantilesInterpolateWithinBuckets) {
  Histogram h({1, 2, 4});
  for (int i = 0; i < 50; ++i) h.observe(0.5);  // bucket (0, 1]
  for (int i = 0; i < 50; ++i) h.observe(3);    // bucket (2, 4]
  EXPECT_EQ(h.count(), 100u);
  EXPECT_DOUBLE_EQ(h.sum(), 175);
  EXPECT_DOUBLE_EQ(h.quantile(0.5), 1.0);   // the 50th of 100 is the last of the first bucket
  EXPECT_DOUBLE_EQ(h.quantile(0.25), 0.5);  // halfway through (0, 1]
  EXPECT_DOUBLE_EQ(h.quantile(0.75), 3.0);  // halfway through (2, 4]
  EXPECT_DOUBLE_EQ(h.quantile(1.0), 4.0);
}

TEST(Histogram, EmptyAndOverflow) {
  Histogram h({1, 2});
  EXPECT_EQ(h.quantile(0.99), 0);
  h.observe(100);  // +Inf bucket: reported as the highest finite bound
  EXPECT_EQ(h.quantile(0.99), 2);
  h.observe(std::nan(""));  // ignored
  EXPECT_EQ(h.count(), 1u);
}

TEST(Histogram, PrometheusBucketsAreCumulative) {
  Histogram h({0.1, 1});
  h.observe(0.05);
  h.observe(0.5);
  h.observe(5);
  const std::string text = h.prometheus("parley_x_seconds", "X");
  EXPECT_NE(text.find("# TYPE parley_x_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("parley_x_seconds_bucket{le=\"0.1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("parley_x_seconds_bucket{le=\"1\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("parley_x_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("parley_x_seconds_count 3\n"), std::string::npos);
  EXPECT_NE(text.find("parley_x_seconds_sum 5.55\n"), std::string::npos);
}

TEST(Histogram, ConcurrentObservationsAreAllCounted) {
  Histogram h(latency_buckets());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) h.observe(0.003);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(h.count(), 40000u);
  EXPECT_NEAR(h.sum(), 120, 1e-6);
}

}  // namespace
}  // namespace parley::obs
