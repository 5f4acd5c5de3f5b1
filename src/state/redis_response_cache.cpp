// The response cache in Redis (parley:cache:{key}, EX = ttl), shared by every
// replica. Redis's own maxmemory policy bounds it; clear() leaves the shared
// entries alone (it is the local memory watchdog's lever).
#include "state/redis_client.h"
#include "state/redis_replies.h"

namespace parley::state {
namespace {

class RedisResponseCache : public ResponseCache {
 public:
  explicit RedisResponseCache(std::shared_ptr<RedisPool> pool) : pool_(std::move(pool)) {}

  std::optional<std::string> get(const std::string& key) override {
    const RedisReply r = checked(pool_->command({"GET", redis_key("cache:" + key)}));
    if (r.type != RedisReply::Type::String) {
      ++stats_.misses;
      return std::nullopt;
    }
    ++stats_.hits;
    return r.str;
  }

  void put(const std::string& key, std::string value, std::chrono::seconds ttl) override {
    if (ttl.count() <= 0) return;
    checked(pool_->command({"SET", redis_key("cache:" + key), std::move(value), "EX", std::to_string(ttl.count())}));
    ++stats_.insertions;
  }

  void clear() override {}

 private:
  std::shared_ptr<RedisPool> pool_;
};

}  // namespace

std::unique_ptr<ResponseCache> make_redis_response_cache(std::shared_ptr<RedisPool> pool) {
  return std::make_unique<RedisResponseCache>(std::move(pool));
}

}  // namespace parley::state
