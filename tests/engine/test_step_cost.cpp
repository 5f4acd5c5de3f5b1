// The step-time fit behind --max-step-ms: recovers a linear cost, is cautious
// after one step, follows a change of speed, keeps a margin for its own
// errors, and bounds the prefill tokens.
#include "engine/step_cost.h"

#include <gtest/gtest.h>

namespace parley {
namespace {

double cost(int32_t decodes, int32_t prefill, double scale = 1.0) {
  return scale * (0.004 + 0.001 * decodes + 0.0005 * prefill);
}

TEST(StepCost, UnknownBeforeAnyStep) {
  const StepCost c;
  EXPECT_FALSE(c.known());
  EXPECT_EQ(c.prefill_within(0.05, 16, 512), 512);
}

TEST(StepCost, RecoversALinearCostAndItsPrefillBudget) {
  StepCost c;
  for (int i = 0; i < 60; ++i) {
    const int32_t d = 4 + i % 13, p = (i * 37) % 200;
    c.observe(d, p, cost(d, p));
  }
  EXPECT_TRUE(c.known());
  EXPECT_NEAR(c.predict(16, 100), cost(16, 100), 1e-6);
  EXPECT_NEAR(c.predict(0, 0), cost(0, 0), 1e-6);
  // (0.05 - 0.004 - 0.016) / 0.0005 = 60 prefill tokens beside 16 decodes,
  // once the margin for the fit's early misses (steps 1-5 vary d and p
  // together) is given back.
  EXPECT_GT(c.error(), 0.0);
  EXPECT_NEAR(c.prefill_within(0.05 + 2 * c.error(), 16, 512), 60, 1);
  EXPECT_EQ(c.prefill_within(0.05, 16, 40), 40);  // the cap
  EXPECT_EQ(c.prefill_within(0.01, 16, 512), 0);  // the decodes alone take 20 ms
}

TEST(StepCost, OneStepPutsItsTimeOnItsTokens) {
  StepCost c;
  c.observe(0, 512, 0.5);  // a burst's first step: 512 prompt tokens in 0.5 s
  EXPECT_NEAR(c.prefill_within(0.05, 0, 4096), 51, 1);
}

TEST(StepCost, FollowsAChangeOfSpeed) {
  StepCost c;
  for (int i = 0; i < 50; ++i) c.observe(16, 16 + i % 32, cost(16, 16 + i % 32));
  for (int i = 0; i < 80; ++i) c.observe(16, 16 + i % 32, cost(16, 16 + i % 32, 2.0));  // the host slows down
  EXPECT_NEAR(c.predict(16, 32), cost(16, 32, 2.0), 0.02 * cost(16, 32, 2.0));
}

TEST(StepCost, NoisyStepsLeaveTwiceTheirErrorFree) {
  StepCost exact, noisy;
  for (int i = 0; i < 200; ++i) {
    const int32_t d = 4 + i % 13, p = (i * 37) % 200;
    exact.observe(d, p, cost(d, p));
    noisy.observe(d, p, cost(d, p) + (i % 2 ? 0.002 : -0.002));  // +-2 ms around the same cost
  }
  EXPECT_LT(exact.error(), 1e-4);  // the ridge's bias only
  EXPECT_NEAR(noisy.error(), 0.002, 0.0005);
  // 60 prefill tokens fit beside 16 decodes in 50 ms; 2 x 2 ms of error cost 8 of them.
  EXPECT_NEAR(exact.prefill_within(0.05, 16, 512), 60, 1);
  EXPECT_NEAR(noisy.prefill_within(0.05, 16, 512), 52, 2);
}

TEST(StepCost, FreePrefillIsCappedNotUnbounded) {
  StepCost c;
  for (int i = 0; i < 20; ++i) c.observe(8, 10 * i, 0.02);  // prefill tokens cost nothing measurable
  EXPECT_EQ(c.prefill_within(0.05, 8, 300), 300);
  EXPECT_EQ(c.prefill_within(0.01, 8, 300), 0);
}

}  // namespace
}  // namespace parley
