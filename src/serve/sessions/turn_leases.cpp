#include "serve/sessions/turn_leases.h"

#include <vector>

namespace parley::serve {

TurnLeases::TurnLeases(state::SessionStore& store, std::chrono::milliseconds lease)
    : store_(store), lease_(lease), renewer_(lease / 3, [this] { renew_all(); }) {}

bool TurnLeases::take(const std::string& id, const std::string& owner) {
  if (!store_.try_lock(id, owner, lease_)) return false;
  std::lock_guard lock(mu_);
  held_.emplace(id, owner);
  return true;
}

void TurnLeases::release(const std::string& id, const std::string& owner) {
  {
    std::lock_guard lock(mu_);
    held_.erase({id, owner});
  }
  store_.unlock(id, owner);
}

// A renewal racing a release is harmless: renew changes only a lock its owner holds.
void TurnLeases::renew_all() {
  std::vector<std::pair<std::string, std::string>> held;
  {
    std::lock_guard lock(mu_);
    held.assign(held_.begin(), held_.end());
  }
  for (const auto& [id, owner] : held) {
    try {
      store_.renew(id, owner, lease_);
    } catch (const std::exception&) {
      // Redis errors other than unavailability: the lease runs out unless the next round renews it.
    }
  }
}

}  // namespace parley::serve
