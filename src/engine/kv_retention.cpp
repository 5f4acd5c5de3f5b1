#include "engine/kv_retention.h"

#include <algorithm>
#include <limits>
#include <string>

#include "util/error.h"

namespace parley {
namespace {

int32_t capacity_of(const KvRetention& r) {
  switch (r.policy) {
    case KvPolicy::Full: return 0;
    case KvPolicy::Window: return r.window;
    case KvPolicy::Sink: return r.sink + r.window;
    case KvPolicy::HeavyHitter: return r.sink + r.heavy + r.window;
  }
  return 0;
}

}  // namespace

const char* kv_policy_name(KvPolicy p) {
  switch (p) {
    case KvPolicy::Full: return "full";
    case KvPolicy::Window: return "window";
    case KvPolicy::Sink: return "sink";
    case KvPolicy::HeavyHitter: return "heavy-hitter";
  }
  return "full";
}

std::optional<KvPolicy> kv_policy_from_name(const std::string& name) {
  for (KvPolicy p : {KvPolicy::Full, KvPolicy::Window, KvPolicy::Sink, KvPolicy::HeavyHitter})
    if (name == kv_policy_name(p)) return p;
  return std::nullopt;
}

void validate_retention(const KvRetention& r, int32_t context_limit) {
  if (r.policy == KvPolicy::Full) return;
  if (r.window < 1 || r.sink < 0 || r.heavy < 0)
    throw Error(std::string("KV retention ") + kv_policy_name(r.policy) +
                ": window must be >= 1 and sink, heavy >= 0");
  // Only the sizes the policy uses count (a window policy ignores `sink`).
  if (capacity_of(r) > context_limit)
    throw Error(std::string("KV retention ") + kv_policy_name(r.policy) + ": a budget of " +
                std::to_string(capacity_of(r)) + " tokens exceeds the context of " + std::to_string(context_limit));
}

RetainedKv::RetainedKv(const KvRetention& r) : r_(r), capacity_(capacity_of(r)) {
  pos_.assign(size_t(capacity_), -1);
  slots_.resize(size_t(capacity_));
  if (r.policy == KvPolicy::HeavyHitter) sums_.assign(size_t(capacity_), 0.0f);
}

// Half the recent window: the tokens of one step are then always among the
// most recent, never evicted by their own step.
int32_t RetainedKv::max_chunk() const {
  return r_.policy == KvPolicy::Full ? std::numeric_limits<int32_t>::max() : std::max(1, r_.window / 2);
}

int32_t RetainedKv::slots_after(int32_t n) const { return std::min(capacity_, std::max(n_slots_, live_ + n)); }

// The oldest token outside the sinks, or under HeavyHitter the least
// attended one between the sinks and the recent window when there is one.
int32_t RetainedKv::victim() const {
  const int32_t keep_first = r_.policy == KvPolicy::Window ? 0 : r_.sink;
  int32_t oldest = -1, lightest = -1;
  for (int32_t s = 0; s < n_slots_; ++s) {
    const int32_t p = pos_[size_t(s)];
    if (p < keep_first) continue;
    if (p == keep_first) oldest = s;
    if (r_.policy == KvPolicy::HeavyHitter && p < live_ - r_.window &&
        (lightest < 0 || sums_[size_t(s)] < sums_[size_t(lightest)]))
      lightest = s;
  }
  return lightest >= 0 ? lightest : oldest;
}

// Later tokens move one position down: positions stay contiguous.
void RetainedKv::evict(int32_t slot) {
  const int32_t gone = pos_[size_t(slot)];
  for (int32_t s = 0; s < n_slots_; ++s)
    if (pos_[size_t(s)] > gone) --pos_[size_t(s)];
  pos_[size_t(slot)] = -1;
  if (!sums_.empty()) sums_[size_t(slot)] = 0.0f;
  --live_;
}

void RetainedKv::place(int32_t n) {
  while (live_ + n > capacity_) evict(victim());
  int32_t hole = 0;
  for (int32_t i = 0; i < n; ++i) {
    while (hole < n_slots_ && pos_[size_t(hole)] >= 0) ++hole;
    const int32_t slot = hole < n_slots_ ? hole : n_slots_++;
    pos_[size_t(slot)] = live_++;
    slots_[size_t(i)] = slot;
  }
}

void RetainedKv::reset() {
  std::fill(pos_.begin(), pos_.end(), -1);
  std::fill(sums_.begin(), sums_.end(), 0.0f);
  live_ = n_slots_ = 0;
}

}  // namespace parley
