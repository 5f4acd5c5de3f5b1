// TurnLeases: the turn locks a replica holds are renewed, each for the
// lease's length, until their turns release them. The renewal thread's
// rounds are called directly here (the lease is long enough that the thread
// never runs one during a test).
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <stdexcept>
#include <tuple>

#include "serve/sessions/session_turn.h"
#include "serve/sessions/turn_leases.h"

namespace parley::serve {
namespace {

using namespace std::chrono_literals;
using Renewal = std::tuple<std::string, std::string, std::chrono::milliseconds>;  // id, owner, ttl

// The embedded store, recording every renewal; renewing `failing_id` throws.
class RecordingStore : public state::SessionStore {
 public:
  void put(const state::Session& s) override { local_->put(s); }
  std::optional<state::Session> get(const std::string& id) override { return local_->get(id); }
  bool remove(const std::string& id) override { return local_->remove(id); }
  state::SessionPage list(const std::string& user, const std::string& key, const std::string& cursor,
                          int limit) override {
    return local_->list(user, key, cursor, limit);
  }
  bool append_turn(const std::string& id, const state::Turn& turn) override { return local_->append_turn(id, turn); }
  bool try_lock(const std::string& id, const std::string& owner, std::chrono::milliseconds ttl) override {
    return local_->try_lock(id, owner, ttl);
  }
  bool renew(const std::string& id, const std::string& owner, std::chrono::milliseconds ttl) override {
    {
      std::lock_guard lock(mu_);
      renewals_.emplace(id, owner, ttl);
    }
    if (id == failing_id) throw std::runtime_error("renewal failed");
    return local_->renew(id, owner, ttl);
  }
  void unlock(const std::string& id, const std::string& owner) override { local_->unlock(id, owner); }

  std::multiset<Renewal> take_renewals() {
    std::lock_guard lock(mu_);
    return std::exchange(renewals_, {});
  }

  std::string failing_id;

 private:
  std::unique_ptr<state::SessionStore> local_ = state::make_local_session_store("");
  std::mutex mu_;
  std::multiset<Renewal> renewals_;
};

TEST(TurnLeases, RenewsEveryHeldLockForTheLeaseUntilItIsReleased) {
  RecordingStore store;
  TurnLeases leases(store, 1h);
  ASSERT_TRUE(leases.take("s1", "a"));
  ASSERT_TRUE(leases.take("s2", "b"));
  EXPECT_FALSE(leases.take("s1", "c"));  // held: not taken, not renewed
  leases.renew_all();
  EXPECT_EQ(store.take_renewals(), (std::multiset<Renewal>{{"s1", "a", 1h}, {"s2", "b", 1h}}));
  leases.release("s1", "a");
  leases.renew_all();
  EXPECT_EQ(store.take_renewals(), (std::multiset<Renewal>{{"s2", "b", 1h}}));
  EXPECT_TRUE(leases.take("s1", "c"));  // released in the store too
}

TEST(TurnLeases, AFailedRenewalLeavesTheOthersRenewed) {
  RecordingStore store;
  store.failing_id = "s1";
  TurnLeases leases(store, 1h);
  ASSERT_TRUE(leases.take("s1", "a"));
  ASSERT_TRUE(leases.take("s2", "b"));
  leases.renew_all();
  EXPECT_EQ(store.take_renewals(), (std::multiset<Renewal>{{"s1", "a", 1h}, {"s2", "b", 1h}}));
}

TEST(TurnLeases, ASessionTurnIsRenewedWhileItRuns) {
  RecordingStore store;
  TurnLeases leases(store, 1h);
  state::Session s;
  s.id = state::new_session_id();
  store.put(s);
  {
    auto turn = SessionTurn::begin(leases, s.id, "");
    leases.renew_all();
    const auto renewed = store.take_renewals();
    ASSERT_EQ(renewed.size(), 1u);
    EXPECT_EQ(std::get<0>(*renewed.begin()), s.id);
  }  // dropped: released
  leases.renew_all();
  EXPECT_TRUE(store.take_renewals().empty());
}

}  // namespace
}  // namespace parley::serve
