// The response cache on Redis, on the local LRU while Redis is unavailable
// (entries cached locally then are not copied back: they are only a cache).
#include "state/failover.h"
#include "state/outage_log.h"

namespace parley::state {
namespace {

class FailoverResponseCache : public ResponseCache {
 public:
  FailoverResponseCache(std::unique_ptr<ResponseCache> redis, std::unique_ptr<ResponseCache> local,
                        std::shared_ptr<FailoverStats> stats)
      : redis_(std::move(redis)), local_(std::move(local)), log_("response cache", std::move(stats)) {}

  std::optional<std::string> get(const std::string& key) override {
    std::optional<std::string> value =
        with_fallback(log_, [&] { return redis_->get(key); }, [&] { return local_->get(key); });
    ++(value ? stats_.hits : stats_.misses);
    publish();
    return value;
  }

  void put(const std::string& key, std::string value, std::chrono::seconds ttl) override {
    // Redis gets a copy: the value is still needed if that put fails.
    with_fallback(log_, [&] { redis_->put(key, value, ttl); }, [&] { local_->put(key, std::move(value), ttl); });
    ++stats_.insertions;
    publish();
  }

  void clear() override {
    local_->clear();
    redis_->clear();
    publish();
  }

 private:
  // Bytes, entries and evictions are the local cache's (Redis bounds its own memory).
  void publish() {
    stats_.bytes = local_->stats().bytes.load();
    stats_.entries = local_->stats().entries.load();
    stats_.evictions = local_->stats().evictions.load();
  }

  std::unique_ptr<ResponseCache> redis_, local_;
  OutageLog log_;
};

}  // namespace

std::unique_ptr<ResponseCache> make_failover_response_cache(std::unique_ptr<ResponseCache> redis,
                                                            std::unique_ptr<ResponseCache> local,
                                                            std::shared_ptr<FailoverStats> stats) {
  return std::make_unique<FailoverResponseCache>(std::move(redis), std::move(local), std::move(stats));
}

}  // namespace parley::state
