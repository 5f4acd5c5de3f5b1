#include "obs/latency_window.h"

namespace parley::obs {

void LatencyWindow::tick() {
  auto snap = histogram_.snapshot();
  std::lock_guard lock(mu_);
  snapshots_.push_back(std::move(snap));
  while (snapshots_.size() > keep_ + 1) snapshots_.pop_front();
}

double LatencyWindow::quantile(double q) const {
  std::vector<uint64_t> counts = histogram_.snapshot();
  {
    std::lock_guard lock(mu_);
    if (!snapshots_.empty())
      for (size_t i = 0; i < counts.size(); ++i) counts[i] -= snapshots_.front()[i];
  }
  return bucket_quantile(histogram_.bounds(), counts, q);
}

}  // namespace parley::obs
