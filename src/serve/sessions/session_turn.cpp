#include "serve/sessions/session_turn.h"

#include "serve/transport/api_error.h"
#include "serve/api/openai_format.h"

namespace parley::serve {

std::shared_ptr<SessionTurn> SessionTurn::begin(TurnLeases& leases, const std::string& id,
                                                const std::string& api_key) {
  state::SessionStore& store = leases.store();
  std::shared_ptr<SessionTurn> turn(new SessionTurn(leases, random_id("turn-")));
  if (!leases.take(id, turn->owner_)) {
    const auto session = store.get(id);
    if (!session || session->api_key != api_key) throw not_found("No session '" + id + "' (unknown or expired)", "session_not_found");
    throw ApiError(409, "Another turn of session '" + id + "' is running; send the next one when it has finished",
                   "invalid_request_error", "session_id", "session_busy");
  }
  turn->locked_ = true;
  turn->session_.id = id;
  auto session = store.get(id);
  if (!session || session->api_key != api_key)
    throw not_found("No session '" + id + "' (unknown or expired)", "session_not_found");
  turn->session_ = std::move(*session);
  return turn;
}

SessionTurn::~SessionTurn() { release(); }

bool SessionTurn::store(const std::string& user, const std::string& assistant) {
  const bool stored = leases_.store().append_turn(session_.id, state::Turn{user, assistant, state::now_ms()});
  release();
  return stored;
}

void SessionTurn::release() {
  if (!locked_) return;
  locked_ = false;
  try {
    leases_.release(session_.id, owner_);
  } catch (const std::exception&) {
    // The lease runs out by itself; a destructor must not throw.
  }
}

}  // namespace parley::serve
