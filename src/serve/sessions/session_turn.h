#pragma once
// One chat turn on a session: holds the session's turn lock (a lease renewed
// by TurnLeases) from before its history is read until the turn is stored or
// dropped, so that turns on one session run one at a time (across replicas
// too, with Redis) and are never lost or interleaved.
#include <memory>
#include <string>

#include "serve/sessions/turn_leases.h"

namespace parley::serve {

class SessionTurn {
 public:
  // Takes the lock (409 session_busy when another turn holds it) and loads
  // the session (404 when unknown, expired or bound to another API key).
  static std::shared_ptr<SessionTurn> begin(TurnLeases& leases, const std::string& id, const std::string& api_key);
  ~SessionTurn();  // releases the lock if still held (a cancelled or failed turn)
  SessionTurn(const SessionTurn&) = delete;
  SessionTurn& operator=(const SessionTurn&) = delete;

  const state::Session& session() const { return session_; }
  // Appends the turn, then releases the lock. False: the session was deleted meanwhile.
  bool store(const std::string& user, const std::string& assistant);
  void release();

 private:
  SessionTurn(TurnLeases& leases, std::string owner) : leases_(leases), owner_(std::move(owner)) {}

  TurnLeases& leases_;
  std::string owner_;
  state::Session session_;
  bool locked_ = false;
};

}  // namespace parley::serve
