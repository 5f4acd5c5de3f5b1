#pragma once
// The session turn locks this replica holds, kept alive while their turns
// run: each lock is a short lease in the session store, and one thread renews
// every held lease each third of its length. A replica that dies holding a
// lock, or an unlock that Redis missed (down, stalled, restarted from its
// AOF), blocks the session for one lease at most.
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "obs/periodic.h"
#include "state/session_store.h"

namespace parley::serve {

class TurnLeases {
 public:
  static constexpr std::chrono::seconds kDefaultLease{10};

  explicit TurnLeases(state::SessionStore& store, std::chrono::milliseconds lease = kDefaultLease);
  TurnLeases(const TurnLeases&) = delete;
  TurnLeases& operator=(const TurnLeases&) = delete;

  state::SessionStore& store() const { return store_; }
  bool take(const std::string& id, const std::string& owner);     // false: another turn holds it
  void release(const std::string& id, const std::string& owner);  // may throw (the store's errors)
  void renew_all();  // what the thread does; a renewal that fails waits for the next round

 private:
  state::SessionStore& store_;
  const std::chrono::milliseconds lease_;
  std::mutex mu_;
  std::set<std::pair<std::string, std::string>> held_;  // session id, owner
  obs::Periodic renewer_;  // last: stops before the rest goes
};

}  // namespace parley::serve
