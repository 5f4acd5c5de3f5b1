#pragma once
// Quantiles of a Histogram over the last N seconds: tick() (once a second)
// keeps snapshots of the bucket counts, and a window's histogram is the
// difference between now and N seconds ago. Thread-safe.
#include <chrono>
#include <deque>
#include <mutex>
#include <vector>

#include "obs/histogram.h"

namespace parley::obs {

class LatencyWindow {
 public:
  LatencyWindow(const Histogram& histogram, size_t seconds = 10) : histogram_(histogram), keep_(seconds) {}
  void tick();  // records a snapshot; call about once a second
  // The q-quantile of what was observed since the oldest kept snapshot (0: nothing).
  double quantile(double q) const;

 private:
  const Histogram& histogram_;
  size_t keep_;
  mutable std::mutex mu_;
  std::deque<std::vector<uint64_t>> snapshots_;
};

}  // namespace parley::obs
