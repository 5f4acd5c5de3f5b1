// The in-process response cache: LRU list + hash map under one mutex, within
// a byte budget counted as key + value bytes of every entry.
#include <list>
#include <mutex>
#include <unordered_map>

#include "state/response_cache.h"

namespace parley::state {
namespace {

using Clock = std::chrono::steady_clock;

class LocalResponseCache : public ResponseCache {
 public:
  explicit LocalResponseCache(uint64_t byte_budget) : budget_(byte_budget) {}

  std::optional<std::string> get(const std::string& key) override {
    std::lock_guard lock(mu_);
    const auto it = index_.find(key);
    if (it == index_.end() || it->second->expires <= Clock::now()) {
      if (it != index_.end()) erase(it->second);
      ++stats_.misses;
      return std::nullopt;
    }
    lru_.splice(lru_.begin(), lru_, it->second);  // most recently used first
    ++stats_.hits;
    return it->second->value;
  }

  void put(const std::string& key, std::string value, std::chrono::seconds ttl) override {
    const uint64_t size = key.size() + value.size();
    std::lock_guard lock(mu_);
    if (const auto it = index_.find(key); it != index_.end()) erase(it->second);
    if (size > budget_ || ttl.count() <= 0) return;  // would never fit, or already stale
    while (bytes_ + size > budget_) {
      erase(std::prev(lru_.end()));
      ++stats_.evictions;
    }
    lru_.push_front({key, std::move(value), Clock::now() + ttl});
    index_[key] = lru_.begin();
    bytes_ += size;
    ++stats_.insertions;
    publish();
  }

  void clear() override {
    std::lock_guard lock(mu_);
    lru_.clear();
    index_.clear();
    bytes_ = 0;
    publish();
  }

 private:
  struct Entry {
    std::string key, value;
    Clock::time_point expires;
  };
  using Position = std::list<Entry>::iterator;

  void erase(Position p) {
    bytes_ -= p->key.size() + p->value.size();
    index_.erase(p->key);
    lru_.erase(p);
    publish();
  }

  void publish() {
    stats_.bytes = bytes_;
    stats_.entries = lru_.size();
  }

  const uint64_t budget_;
  std::mutex mu_;
  std::list<Entry> lru_;
  std::unordered_map<std::string, Position> index_;
  uint64_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<ResponseCache> make_local_response_cache(uint64_t byte_budget) {
  return std::make_unique<LocalResponseCache>(byte_budget);
}

}  // namespace parley::state
