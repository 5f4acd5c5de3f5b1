#pragma once
// Token buckets for rate limits, by key (an API key's name or a client IP):
// `rate` tokens per second refill a bucket of `burst` tokens. Local (one
// process) or in Redis (one atomic server-side script, so every replica
// shares the bucket). take() may go negative by `cost` only when allowed.
#include <cstdint>
#include <memory>
#include <string>

namespace parley::state {

class RedisPool;
struct FailoverStats;

struct BucketResult {
  bool allowed = false;
  double remaining = 0;       // tokens left after this take (not below 0)
  double retry_after_s = 0;   // when refused: until `cost` tokens are there
  double reset_s = 0;         // until the bucket is full again
};

class RateBuckets {
 public:
  virtual ~RateBuckets() = default;
  // Takes `cost` tokens from bucket `key` if it holds that many.
  virtual BucketResult take(const std::string& key, double cost, double rate, double burst) = 0;
  // Returns `amount` tokens (a reservation larger than what was used), capped at burst.
  virtual void give_back(const std::string& key, double amount, double rate, double burst) = 0;
};

std::unique_ptr<RateBuckets> make_local_rate_buckets();
std::unique_ptr<RateBuckets> make_redis_rate_buckets(std::shared_ptr<RedisPool> pool);
// Redis, falling back to the local buckets while Redis is unavailable;
// fallbacks are counted in `stats` (failover.h) when given.
std::unique_ptr<RateBuckets> make_failover_rate_buckets(std::shared_ptr<RedisPool> pool,
                                                        std::shared_ptr<FailoverStats> stats = nullptr);

}  // namespace parley::state
