#pragma once
// Builds the session store, the store of responses kept for
// POST /v1/responses and the response cache `parley serve` uses, and loads
// the static answers: embedded (memory, sessions persisted to a SQLite
// file when one is given) or Redis (shared by replicas) with the embedded
// ones as the fallback while Redis is unavailable.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "serve/api/session_cache_services.h"
#include "serve/sessions/turn_leases.h"

namespace parley::state {
class RedisPool;
}

namespace parley::serve {

struct StateBackendOptions {
  std::string state_db;                         // SQLite file for sessions; "" = memory only
  std::string redis_url;                        // redis://[:password@]host:port/db; "" = embedded
  bool redis_optional = false;                  // start with local state when Redis fails its check
  uint64_t response_cache_bytes = 64ull << 20;  // local cache budget; 0 = no response cache
  std::string static_answers;                   // JSON or YAML file; "" = none
  std::chrono::seconds lock_lease = TurnLeases::kDefaultLease;  // of a session's turn lock
};

class StateBackends {
 public:
  // With Redis, checks it first (connect, AUTH, SELECT, PING) and throws
  // parley::Error naming what failed; with `redis_optional` it warns on
  // stderr instead and starts with the state backend down (local state until
  // a Redis operation succeeds). Messages show the URL's password masked.
  explicit StateBackends(const StateBackendOptions& options);
  ~StateBackends();

  // Points `services` at the backends (which must outlive its use).
  void attach(StateServices& services) const;

 private:
  std::shared_ptr<state::RedisPool> pool_;
  std::shared_ptr<state::FailoverStats> failover_;
  std::unique_ptr<state::SessionStore> sessions_;
  std::unique_ptr<state::SessionStore> responses_;
  std::unique_ptr<TurnLeases> turn_leases_;
  std::unique_ptr<state::ResponseCache> cache_;
  std::unique_ptr<state::StaticAnswers> static_answers_;
};

}  // namespace parley::serve
