// Sessions on Redis with a local mirror: every session this replica writes or
// reads is also kept in the local store, so that during an outage its
// conversations go on locally. Sessions changed during the outage are written
// back to Redis by the first call that reaches it again (last writer wins),
// and so are the unlocks of turn locks taken in Redis that Redis missed.
#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "state/failover.h"
#include "state/outage_log.h"

namespace parley::state {
namespace {

class FailoverSessionStore : public SessionStore {
  // Defined first: its return type is deduced.
  template <class RedisOp, class LocalOp>
  auto call(RedisOp&& redis_op, LocalOp&& local_op) {
    return with_fallback(
        log_,
        [&] {
          write_back();
          return redis_op();
        },
        local_op);
  }

 public:
  FailoverSessionStore(std::unique_ptr<SessionStore> redis, std::unique_ptr<SessionStore> local,
                       std::shared_ptr<FailoverStats> stats, const std::string& what)
      : redis_(std::move(redis)), local_(std::move(local)), log_(what, std::move(stats)) {}

  void put(const Session& s) override {
    local_->put(s);
    call([&] { redis_->put(s); }, [&] { mark_dirty(s.id); });
  }

  std::optional<Session> get(const std::string& id) override {
    return call(
        [&] {
          std::optional<Session> s = redis_->get(id);
          if (s) local_->put(*s);
          else local_->remove(id);  // deleted or expired elsewhere
          return s;
        },
        [&] { return local_->get(id); });
  }

  bool remove(const std::string& id) override {
    const bool local = local_->remove(id);
    return call([&] { return redis_->remove(id) || local; },
                [&] {
                  mark_dirty(id);
                  return local;
                });
  }

  SessionPage list(const std::string& user, const std::string& api_key, const std::string& cursor,
                   int limit) override {
    return call([&] { return redis_->list(user, api_key, cursor, limit); },
                [&] { return local_->list(user, api_key, cursor, limit); });
  }

  bool append_turn(const std::string& id, const Turn& turn) override {
    return call(
        [&] {
          const bool ok = redis_->append_turn(id, turn);
          if (ok) local_->append_turn(id, turn);
          return ok;
        },
        [&] {
          const bool ok = local_->append_turn(id, turn);
          if (ok) mark_dirty(id);
          return ok;
        });
  }

  bool try_lock(const std::string& id, const std::string& owner, std::chrono::milliseconds ttl) override {
    return call(
        [&] {
          const bool locked = redis_->try_lock(id, owner, ttl);
          if (locked) insert(redis_locks_, {id, owner});
          return locked;
        },
        [&] { return local_->try_lock(id, owner, ttl); });
  }

  bool renew(const std::string& id, const std::string& owner, std::chrono::milliseconds ttl) override {
    return call([&] { return redis_->renew(id, owner, ttl); }, [&] { return local_->renew(id, owner, ttl); });
  }

  // Both: a lock taken before an outage began or ended is released wherever
  // it is. A lock taken in Redis that Redis cannot release now (down or
  // stalled; it may come back from its AOF still holding it) is released by
  // the write-back.
  void unlock(const std::string& id, const std::string& owner) override {
    const Lock lock = {id, owner};
    const bool in_redis = erase(redis_locks_, lock);
    call([&] { redis_->unlock(id, owner); },
         [&] {
           if (in_redis) insert(lost_unlocks_, lock);
         });
    local_->unlock(id, owner);
  }

 private:
  using Lock = std::pair<std::string, std::string>;  // session id, owner

  void mark_dirty(const std::string& id) { insert(dirty_, id); }

  // The sets below, under mu_; has_pending_ says whether there is anything to write back.
  template <class T>
  void insert(std::set<T>& items, const T& item) {
    std::lock_guard lock(mu_);
    items.insert(item);
    has_pending_ = !dirty_.empty() || !lost_unlocks_.empty();
  }

  template <class T>
  bool erase(std::set<T>& items, const T& item) {
    std::lock_guard lock(mu_);
    const bool found = items.erase(item) > 0;
    has_pending_ = !dirty_.empty() || !lost_unlocks_.empty();
    return found;
  }

  template <class T>
  std::optional<T> first(const std::set<T>& items) {
    std::lock_guard lock(mu_);
    return items.empty() ? std::nullopt : std::optional<T>(*items.begin());
  }

  // Sessions created, changed or removed during the outage go to Redis now,
  // then the lost unlocks. Other calls wait until this is done: a session
  // not yet written back would look deleted to them, a lock not yet released
  // busy. What fails to be written stays pending.
  void write_back() {
    if (!has_pending_) return;
    std::lock_guard writing(write_back_mu_);
    while (const std::optional<std::string> id = first(dirty_)) {
      if (std::optional<Session> s = local_->get(*id)) redis_->put(*s);
      else redis_->remove(*id);
      erase(dirty_, *id);
    }
    while (const std::optional<Lock> lock = first(lost_unlocks_)) {
      redis_->unlock(lock->first, lock->second);
      erase(lost_unlocks_, *lock);
    }
  }

  std::unique_ptr<SessionStore> redis_, local_;
  OutageLog log_;
  std::mutex write_back_mu_, mu_;
  std::set<std::string> dirty_;     // sessions changed during an outage
  std::set<Lock> redis_locks_;      // turn locks this replica holds in Redis
  std::set<Lock> lost_unlocks_;     // ... whose unlock Redis missed
  std::atomic<bool> has_pending_{false};
};

}  // namespace

std::unique_ptr<SessionStore> make_failover_session_store(std::unique_ptr<SessionStore> redis,
                                                          std::unique_ptr<SessionStore> local,
                                                          std::shared_ptr<FailoverStats> stats,
                                                          const std::string& what) {
  return std::make_unique<FailoverSessionStore>(std::move(redis), std::move(local), std::move(stats), what);
}

}  // namespace parley::state
