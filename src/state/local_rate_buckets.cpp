// Token buckets in this process: a map under one mutex, refilled by the time
// elapsed since the bucket was last touched.
#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "state/bucket_math.h"

namespace parley::state {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kPurgeAbove = 10000;  // buckets kept before full ones are dropped

class LocalRateBuckets : public RateBuckets {
 public:
  BucketResult take(const std::string& key, double cost, double rate, double burst) override {
    check_bucket(cost, rate, burst);
    std::lock_guard lock(mu_);
    Bucket& b = refilled(key, rate, burst);
    const bool allowed = b.tokens >= cost;
    if (allowed) b.tokens -= cost;
    return bucket_result(allowed, b.tokens, cost, rate, burst);
  }

  void give_back(const std::string& key, double amount, double rate, double burst) override {
    check_bucket(amount, rate, burst);
    std::lock_guard lock(mu_);
    Bucket& b = refilled(key, rate, burst);
    b.tokens = std::min(burst, b.tokens + amount);
  }

 private:
  struct Bucket {
    double tokens = 0, rate = 0, burst = 0;
    Clock::time_point updated;
  };

  static double refill(const Bucket& b, Clock::time_point now) {
    return std::min(b.burst, b.tokens + std::chrono::duration<double>(now - b.updated).count() * b.rate);
  }

  Bucket& refilled(const std::string& key, double rate, double burst) {
    const auto now = Clock::now();
    if (buckets_.size() > kPurgeAbove) purge_full(now);
    auto [it, fresh] = buckets_.try_emplace(key, Bucket{burst, rate, burst, now});
    Bucket& b = it->second;
    if (!fresh) {
      b.rate = rate;  // limits may change between calls (a reloaded keys file)
      b.burst = burst;
      b.tokens = refill(b, now);
      b.updated = now;
    }
    return b;
  }

  // A full bucket is the same as none: dropping them bounds the map.
  void purge_full(Clock::time_point now) {
    std::erase_if(buckets_, [&](const auto& kv) { return refill(kv.second, now) >= kv.second.burst; });
  }

  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace

std::unique_ptr<RateBuckets> make_local_rate_buckets() { return std::make_unique<LocalRateBuckets>(); }

}  // namespace parley::state
