#include "serve/session_turn.h"

#include <chrono>

#include "serve/api_error.h"
#include "serve/openai_format.h"

namespace parley::serve {
namespace {

// Longer than any turn should run; a replica that dies holding the lock
// blocks the session for at most this long.
constexpr std::chrono::minutes kLockTtl{10};

}  // namespace

std::shared_ptr<SessionTurn> SessionTurn::begin(state::SessionStore& store, const std::string& id,
                                                const std::string& api_key) {
  std::shared_ptr<SessionTurn> turn(new SessionTurn(store, random_id("turn-")));
  if (!store.try_lock(id, turn->owner_, kLockTtl)) {
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
  const bool stored = store_.append_turn(session_.id, state::Turn{user, assistant, state::now_ms()});
  release();
  return stored;
}

void SessionTurn::release() {
  if (!locked_) return;
  locked_ = false;
  try {
    store_.unlock(session_.id, owner_);
  } catch (const std::exception&) {
    // The lock expires by itself; a destructor must not throw.
  }
}

}  // namespace parley::serve
