#pragma once
// Answers of deterministic requests, by key (a hash the serve layer makes of
// the model, the prompt tokens and every output-changing parameter). Values
// are opaque bytes. Entries expire after their TTL; the local cache also
// keeps within a byte budget, evicting the least recently used.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace parley::state {

struct CacheStats {
  std::atomic<uint64_t> hits{0}, misses{0}, insertions{0}, evictions{0};
  std::atomic<uint64_t> bytes{0}, entries{0};  // local cache only
};

class ResponseCache {
 public:
  virtual ~ResponseCache() = default;
  virtual std::optional<std::string> get(const std::string& key) = 0;  // counts a hit or a miss
  virtual void put(const std::string& key, std::string value, std::chrono::seconds ttl) = 0;
  virtual void clear() = 0;  // the memory watchdog's lever (local cache)
  const CacheStats& stats() const { return stats_; }

 protected:
  CacheStats stats_;
};

std::unique_ptr<ResponseCache> make_local_response_cache(uint64_t byte_budget);

}  // namespace parley::state
