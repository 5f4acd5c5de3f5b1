// Token buckets in Redis, shared by every replica: parley:rl:{key} is a hash
// {tokens, ts}; one Lua script refills by the server's clock (replicas' clocks
// may differ), takes or gives back, and lets an idle bucket expire once full.
#include <algorithm>

#include "state/bucket_math.h"
#include "state/redis_client.h"
#include "state/redis_replies.h"

namespace parley::state {
namespace {

// KEYS: bucket. ARGV: amount, rate per second, burst, "take" | "give".
// Returns {allowed (0/1), tokens left (a string: Lua numbers become integers otherwise)}.
constexpr const char* kBucketScript = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local amount, rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1]) or burst
local ts = tonumber(b[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local allowed = 1
if ARGV[4] == 'give' then
  tokens = math.min(burst, tokens + amount)
elseif tokens >= amount then
  tokens = tokens - amount
else
  allowed = 0
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return {allowed, string.format('%.17g', tokens)}
)lua";

class RedisRateBuckets : public RateBuckets {
 public:
  explicit RedisRateBuckets(std::shared_ptr<RedisPool> pool) : pool_(std::move(pool)) {}

  BucketResult take(const std::string& key, double cost, double rate, double burst) override {
    check_bucket(cost, rate, burst);
    const RedisReply r = run(key, cost, rate, burst, "take");
    if (r.type != RedisReply::Type::Array || r.elements.size() != 2) throw Error("redis: unexpected bucket reply");
    return bucket_result(r.elements[0].integer == 1, std::stod(r.elements[1].str), cost, rate, burst);
  }

  void give_back(const std::string& key, double amount, double rate, double burst) override {
    check_bucket(amount, rate, burst);
    run(key, amount, rate, burst, "give");
  }

 private:
  RedisReply run(const std::string& key, double amount, double rate, double burst, const char* mode) {
    auto text = [](double v) {
      char buf[32];
      snprintf(buf, sizeof buf, "%.17g", v);
      return std::string(buf);
    };
    return eval(*pool_, kBucketScript, {redis_key("rl:" + key)}, {text(amount), text(rate), text(burst), mode});
  }

  std::shared_ptr<RedisPool> pool_;
};

}  // namespace

std::unique_ptr<RateBuckets> make_redis_rate_buckets(std::shared_ptr<RedisPool> pool) {
  return std::make_unique<RedisRateBuckets>(std::move(pool));
}

}  // namespace parley::state
