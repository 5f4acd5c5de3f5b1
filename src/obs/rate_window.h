#pragma once
// A sliding count over the last N seconds (per-second slots), e.g. generated
// tokens for "tokens per second over the last 10 s". Thread-safe.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

namespace parley::obs {

class RateWindow {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateWindow(int seconds = 10) : slots_(size_t(seconds) + 1) {}
  void add(uint64_t amount, Clock::time_point now = Clock::now());
  // Per second over the last N complete seconds.
  double rate(Clock::time_point now = Clock::now()) const;

 private:
  struct Slot {
    int64_t second = -1;
    uint64_t amount = 0;
  };
  static int64_t second_of(Clock::time_point t);
  mutable std::mutex mu_;
  std::vector<Slot> slots_;
};

}  // namespace parley::obs
