// Token buckets, local and in Redis: N allowed then refused with a sensible
// retry_after, refilled after waiting, and (Redis) one bucket shared by two
// replicas' pools.
#include <gtest/gtest.h>

#include <thread>

#include "redis_test.h"
#include "state/rate_buckets.h"
#include "util/error.h"

namespace parley::state {
namespace {

using namespace std::chrono_literals;

// 5 tokens of burst refilled at 10/s: five allowed, then refused for up to
// 0.1 s. Bounds allow for a slow (sanitized, loaded) machine: time only adds tokens.
void check_bucket_behaviour(RateBuckets& buckets) {
  for (int i = 0; i < 5; ++i) {
    const BucketResult r = buckets.take("client-a", 1, 10, 5);
    ASSERT_TRUE(r.allowed) << "take " << i;
    EXPECT_GE(r.remaining, 4 - i);
    EXPECT_LT(r.remaining, 4 - i + 0.9);
  }
  BucketResult refused = buckets.take("client-a", 1, 10, 5);
  for (int tries = 0; refused.allowed && tries < 5; ++tries) refused = buckets.take("client-a", 1, 10, 5);
  ASSERT_FALSE(refused.allowed);
  EXPECT_GT(refused.retry_after_s, 0);
  EXPECT_LE(refused.retry_after_s, 0.1 + 1e-9);
  EXPECT_NEAR(refused.reset_s, 0.5 - refused.remaining / 10, 1e-9);
  EXPECT_GE(refused.reset_s, 0.4);
  EXPECT_TRUE(buckets.take("client-b", 1, 10, 5).allowed) << "buckets are per key";

  std::this_thread::sleep_for(std::chrono::duration<double>(refused.retry_after_s + 0.02));
  EXPECT_TRUE(buckets.take("client-a", 1, 10, 5).allowed) << "refilled after retry_after";

  // Slow refill from here: 0.01 token/s. A reservation of 3 tokens used
  // only 1: 2 come back, capped at the burst.
  EXPECT_TRUE(buckets.take("tokens", 3, 0.01, 4).allowed);
  buckets.give_back("tokens", 2, 0.01, 4);
  EXPECT_NEAR(buckets.take("tokens", 0, 0.01, 4).remaining, 3, 0.01);
  buckets.give_back("tokens", 100, 0.01, 4);
  EXPECT_NEAR(buckets.take("tokens", 4, 0.01, 4).remaining, 0, 0.01);

  const BucketResult too_big = buckets.take("big", 10, 0.01, 4);
  EXPECT_FALSE(too_big.allowed);
  EXPECT_NEAR(too_big.remaining, 4, 1e-9) << "a refused take takes nothing";
  EXPECT_THROW(buckets.take("x", 1, 0, 5), Error);
}

TEST(LocalRateBuckets, TakeRefuseRefill) {
  auto buckets = make_local_rate_buckets();
  check_bucket_behaviour(*buckets);
}

class RedisRateBucketsTest : public test::RedisTest {};

TEST_F(RedisRateBucketsTest, TakeRefuseRefill) {
  auto buckets = make_redis_rate_buckets(pool());
  check_bucket_behaviour(*buckets);
  EXPECT_GT(pool()->command({"PTTL", "parley:rl:client-a"}).integer, 0) << "idle buckets expire";
}

TEST_F(RedisRateBucketsTest, TwoReplicasShareOneBucket) {
  auto replica1 = make_redis_rate_buckets(pool(2));
  auto replica2 = make_redis_rate_buckets(pool(2));
  std::vector<std::thread> threads;
  std::atomic<int> allowed{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      RateBuckets& b = t % 2 ? *replica1 : *replica2;
      for (int i = 0; i < 5; ++i)
        if (b.take("shared-key", 1, 0.01, 10).allowed) ++allowed;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(allowed.load(), 10) << "40 attempts on two replicas, burst 10";
  EXPECT_FALSE(replica1->take("shared-key", 1, 0.01, 10).allowed);
}

}  // namespace
}  // namespace parley::state
