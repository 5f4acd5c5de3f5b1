#pragma once
// Where sessions live: in memory persisted to SQLite (the embedded default),
// or in Redis (shared by replicas). All methods are thread-safe; expired
// sessions are never returned.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "state/session.h"

namespace parley::state {

struct SessionPage {
  std::vector<Session> sessions;  // newest first, without turns
  std::string next_cursor;        // "" when this is the last page
};

class SessionStore {
 public:
  virtual ~SessionStore() = default;
  virtual void put(const Session& s) = 0;  // create or replace (expires_ms = now + ttl)
  virtual std::optional<Session> get(const std::string& id) = 0;
  virtual bool remove(const std::string& id) = 0;  // false: there was none
  // Sessions of `user` (all when empty) and of `api_key` (exactly), after `cursor`.
  virtual SessionPage list(const std::string& user, const std::string& api_key, const std::string& cursor,
                           int limit) = 0;
  // Appends one turn atomically, drops turns beyond max_turns (oldest first)
  // and renews the TTL. False when the session no longer exists.
  virtual bool append_turn(const std::string& id, const Turn& turn) = 0;
  // The per-session turn lock: one turn at a time, across replicas too. The
  // lock is a lease that expires after `ttl` (a replica that died holding it)
  // unless its owner renews it. false: held.
  virtual bool try_lock(const std::string& id, const std::string& owner, std::chrono::milliseconds ttl) = 0;
  // Extends `owner`'s lock to `ttl` from now. false: `owner` does not hold it
  // (released, expired or taken by another owner); nothing changes then.
  virtual bool renew(const std::string& id, const std::string& owner, std::chrono::milliseconds ttl) = 0;
  virtual void unlock(const std::string& id, const std::string& owner) = 0;
};

// In memory, persisted to the SQLite file at `path` (WAL mode) so that a
// restart loses no session; "" keeps them in memory only. `kind` names what
// the store keeps ("session"; "response": the stored responses of
// POST /v1/responses): stores of different kinds share a file but not a
// table (`{kind}s`), so that neither lists nor finds the other's records.
std::unique_ptr<SessionStore> make_local_session_store(const std::string& path, const std::string& kind = "session");

}  // namespace parley::state
