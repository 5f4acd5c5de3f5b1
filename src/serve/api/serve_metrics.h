#pragma once
// The server's latency histograms and counters beyond the engine's stats
// (rendered by metrics.cpp for /metrics and /v1/stats). Thread-safe.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "obs/histogram.h"
#include "obs/latency_window.h"
#include "obs/rate_window.h"

namespace parley::serve {

struct ServeMetrics {
  obs::Histogram ttft{obs::latency_buckets()};         // submit → first token, seconds
  obs::Histogram inter_token{obs::latency_buckets()};  // between tokens of one request
  obs::Histogram e2e{obs::latency_buckets()};          // submit → final event
  obs::Histogram queue_wait{obs::latency_buckets()};   // submit (after admission) → the engine's first step for it
  obs::Histogram batch_size{obs::size_buckets()};      // running sequences, sampled every second
  // The same over the last 10 s (the watchdog ticks them): /v1/stats and degraded mode.
  obs::LatencyWindow ttft_recent{ttft}, inter_token_recent{inter_token}, e2e_recent{e2e}, queue_wait_recent{queue_wait};
  obs::RateWindow output_tokens{10};                   // generated tokens, for tok/s over the last 10 s
  std::atomic<uint64_t> rate_limited{0};     // 429s
  std::atomic<uint64_t> unauthorized{0};     // 401s
  std::atomic<uint64_t> shed{0};             // 503s from admission control and the memory watchdog
  std::atomic<uint64_t> rejected_input{0};   // 400s from validation and the blocklist
  std::atomic<uint64_t> degraded_requests{0};  // served by the fallback model
  std::atomic<uint64_t> deadline_exceeded{0};  // ended by their `timeout`
  std::atomic<uint64_t> rss_bytes{0};        // last watchdog reading
  std::atomic<uint64_t> watchdog_evictions{0};  // both stages below
  std::atomic<uint64_t> watchdog_prefix_cache_evictions{0}, watchdog_response_cache_evictions{0};

  void count_response(const std::string& route, int status) {
    std::lock_guard lock(mu_);
    ++responses_[{route.empty() ? "unmatched" : route, status}];
  }
  std::map<std::pair<std::string, int>, uint64_t> responses() const {
    std::lock_guard lock(mu_);
    return responses_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> responses_;
};

}  // namespace parley::serve
