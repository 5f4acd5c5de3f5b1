#include "obs/rate_window.h"

namespace parley::obs {

int64_t RateWindow::second_of(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

void RateWindow::add(uint64_t amount, Clock::time_point now) {
  const int64_t s = second_of(now);
  std::lock_guard lock(mu_);
  Slot& slot = slots_[size_t(s) % slots_.size()];
  if (slot.second != s) slot = {s, 0};
  slot.amount += amount;
}

double RateWindow::rate(Clock::time_point now) const {
  // The current second is still filling: count the N seconds before it.
  const int64_t current = second_of(now);
  const int64_t n = int64_t(slots_.size()) - 1;
  uint64_t total = 0;
  std::lock_guard lock(mu_);
  for (const Slot& slot : slots_)
    if (slot.second < current && slot.second >= current - n) total += slot.amount;
  return double(total) / double(n);
}

}  // namespace parley::obs
