#pragma once
// The state the chat routes use beyond the engine: the session store, the
// response cache and the static answers (docs/api.md, "Sessions and
// caching"), with their settings. A null pointer turns that part off.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "state/failover.h"
#include "state/response_cache.h"
#include "state/session_store.h"
#include "state/static_answers.h"

namespace parley::serve {

// When a matching static answer replaces the model's: never, always, or only
// while the server is in degraded mode (ServerState::degraded).
enum class StaticAnswersMode { Off, Always, Degraded };

class TurnLeases;

struct StateServices {
  state::SessionStore* sessions = nullptr;
  TurnLeases* turn_leases = nullptr;  // the sessions' turn locks; set with `sessions`
  state::SessionStore* responses = nullptr;  // stored responses of POST /v1/responses (a store of their own)
  state::ResponseCache* response_cache = nullptr;
  state::StaticAnswers* static_answers = nullptr;
  std::shared_ptr<state::FailoverStats> failover;  // Redis fallbacks; null without Redis

  int32_t session_turns = 5;     // default max_turns of a new session
  int64_t session_ttl_s = 86400;  // default ttl_s of a new session
  std::chrono::seconds response_cache_ttl{3600};
  // Cached answers serve only the API key that caused them (no key can probe
  // what another asked); false: one cache for every key.
  bool cache_per_key = true;
  StaticAnswersMode static_mode = StaticAnswersMode::Degraded;

  std::atomic<uint64_t> static_answers_served{0};
  std::atomic<uint64_t> session_turns_stored{0};
};

// false while Redis is configured and its last operation (or the startup check) failed.
inline bool state_backend_up(const StateServices& s) { return !s.failover || !s.failover->degraded; }

}  // namespace parley::serve
