// Rate buckets on Redis, on local buckets while Redis is unavailable: during
// an outage each replica enforces the limit on its own (so N replicas may
// together admit up to N times the limit until Redis is back).
#include "state/failover.h"
#include "state/outage_log.h"
#include "state/rate_buckets.h"
#include "state/redis_client.h"

namespace parley::state {
namespace {

class FailoverRateBuckets : public RateBuckets {
 public:
  FailoverRateBuckets(std::shared_ptr<RedisPool> pool, std::shared_ptr<FailoverStats> stats)
      : redis_(make_redis_rate_buckets(std::move(pool))),
        local_(make_local_rate_buckets()),
        log_("rate limits", std::move(stats)) {}

  BucketResult take(const std::string& key, double cost, double rate, double burst) override {
    return with_fallback(log_, [&] { return redis_->take(key, cost, rate, burst); },
                         [&] { return local_->take(key, cost, rate, burst); });
  }

  void give_back(const std::string& key, double amount, double rate, double burst) override {
    with_fallback(log_, [&] { redis_->give_back(key, amount, rate, burst); },
                  [&] { local_->give_back(key, amount, rate, burst); });
  }

 private:
  std::unique_ptr<RateBuckets> redis_, local_;
  OutageLog log_;
};

}  // namespace

std::unique_ptr<RateBuckets> make_failover_rate_buckets(std::shared_ptr<RedisPool> pool,
                                                        std::shared_ptr<FailoverStats> stats) {
  return std::make_unique<FailoverRateBuckets>(std::move(pool), std::move(stats));
}

}  // namespace parley::state
