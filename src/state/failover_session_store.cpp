// Sessions on Redis with a local mirror: every session this replica writes or
// reads is also kept in the local store, so that during an outage its
// conversations go on locally. Sessions changed during the outage are written
// back to Redis by the first call that reaches it again (last writer wins).
#include <atomic>
#include <mutex>
#include <set>

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
                       std::shared_ptr<FailoverStats> stats)
      : redis_(std::move(redis)), local_(std::move(local)), log_("sessions", std::move(stats)) {}

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
    return call([&] { return redis_->try_lock(id, owner, ttl); }, [&] { return local_->try_lock(id, owner, ttl); });
  }

  // Both: a lock taken before an outage began or ended is released wherever it is.
  void unlock(const std::string& id, const std::string& owner) override {
    call([&] { redis_->unlock(id, owner); }, [] {});
    local_->unlock(id, owner);
  }

 private:
  void mark_dirty(const std::string& id) {
    std::lock_guard lock(dirty_mu_);
    dirty_.insert(id);
    has_dirty_ = true;
  }

  // Sessions created, changed or removed during the outage go to Redis now.
  // Other calls wait until this is done: a session not yet written back
  // would look deleted to them. What fails to be written stays dirty.
  void write_back() {
    if (!has_dirty_) return;
    std::lock_guard writing(write_back_mu_);
    for (;;) {
      std::string id;
      {
        std::lock_guard lock(dirty_mu_);
        if (dirty_.empty()) {
          has_dirty_ = false;
          return;
        }
        id = *dirty_.begin();
      }
      if (std::optional<Session> s = local_->get(id)) redis_->put(*s);
      else redis_->remove(id);
      std::lock_guard lock(dirty_mu_);
      dirty_.erase(id);
    }
  }

  std::unique_ptr<SessionStore> redis_, local_;
  OutageLog log_;
  std::mutex write_back_mu_, dirty_mu_;
  std::set<std::string> dirty_;
  std::atomic<bool> has_dirty_{false};
};

}  // namespace

std::unique_ptr<SessionStore> make_failover_session_store(std::unique_ptr<SessionStore> redis,
                                                          std::unique_ptr<SessionStore> local,
                                                          std::shared_ptr<FailoverStats> stats) {
  return std::make_unique<FailoverSessionStore>(std::move(redis), std::move(local), std::move(stats));
}

}  // namespace parley::state
