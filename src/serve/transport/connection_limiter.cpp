#include "serve/transport/connection_limiter.h"

#include <algorithm>
#include <vector>

namespace parley::serve {

namespace ip = boost::asio::ip;

// --- ConnectionSlot ---

ConnectionSlot::~ConnectionSlot() {
  std::lock_guard lock(limiter_.mu_);
  if (is_idle_) limiter_.idle_.erase(idle_at_);
  limiter_.release_locked(*this);
}

bool ConnectionSlot::idle(std::function<void()> evict) {
  std::lock_guard lock(limiter_.mu_);
  if (!counted_ || (leaves_on_drain_ && limiter_.draining_)) return false;
  if (is_idle_) limiter_.idle_.erase(idle_at_);  // idle since now
  idle_at_ = limiter_.idle_.insert(limiter_.idle_.end(), this);
  is_idle_ = true;
  evict_ = std::move(evict);
  return true;
}

void ConnectionSlot::busy() {
  std::lock_guard lock(limiter_.mu_);
  if (is_idle_) limiter_.idle_.erase(idle_at_);
  is_idle_ = false;
  evict_ = nullptr;
}

// --- ConnectionLimiter ---

ConnectionLimiter::Admission ConnectionLimiter::admit(const std::string& group) {
  const std::string key = caps_.per_address ? group : "";
  std::function<void()> evict;
  ConnectionSlotPtr slot;
  {
    std::lock_guard lock(mu_);
    if (auto it = per_group_.find(key); !key.empty() && it != per_group_.end() && it->second >= caps_.per_address)
      return {nullptr, Verdict::RefusedAddress};
    if (caps_.total && open_ >= caps_.total) {
      if (idle_.empty()) return {nullptr, Verdict::RefusedFull};
      evict = evict_locked(idle_.front());
    }
    ++open_;
    if (!key.empty()) ++per_group_[key];
    slot.reset(new ConnectionSlot(*this, key));
  }
  // Outside the lock: the callback only posts to the victim's strand.
  const Verdict verdict = evict ? Verdict::AdmittedByEviction : Verdict::Admitted;
  if (evict) evict();
  return {std::move(slot), verdict};
}

void ConnectionLimiter::drain() {
  std::vector<std::function<void()>> evictions;
  {
    std::lock_guard lock(mu_);
    draining_ = true;
    for (auto it = idle_.begin(); it != idle_.end();) {
      ConnectionSlot* slot = *it++;
      if (slot->leaves_on_drain_) evictions.push_back(evict_locked(slot));
    }
  }
  for (auto& evict : evictions) evict();
}

size_t ConnectionLimiter::open() const {
  std::lock_guard lock(mu_);
  return open_;
}

std::function<void()> ConnectionLimiter::evict_locked(ConnectionSlot* slot) {
  idle_.erase(slot->idle_at_);
  slot->is_idle_ = false;
  release_locked(*slot);
  return std::move(slot->evict_);
}

void ConnectionLimiter::release_locked(ConnectionSlot& slot) {
  if (!slot.counted_) return;
  slot.counted_ = false;
  --open_;
  if (slot.group_.empty()) return;
  auto it = per_group_.find(slot.group_);
  if (--it->second == 0) per_group_.erase(it);
}

// --- free functions ---

std::string address_group(const ip::address& address) {
  if (address.is_v4()) return address.to_string();
  const ip::address_v6 v6 = address.to_v6();
  if (v6.is_v4_mapped()) return ip::make_address_v4(ip::v4_mapped, v6).to_string();
  ip::address_v6::bytes_type bytes = v6.to_bytes();
  std::fill(bytes.begin() + 8, bytes.end(), 0);
  return ip::address_v6(bytes).to_string() + "/64";
}

size_t default_max_connections(uint64_t fd_limit) {
  const uint64_t reserve = fd_limit / 10 + 64;
  return fd_limit > reserve + 16 ? size_t(fd_limit - reserve) : 16;
}

}  // namespace parley::serve
