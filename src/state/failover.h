#pragma once
// Redis first, local state when Redis is unavailable: a user request never
// fails because Redis is down. Each fallback is logged (once per outage) and
// counted; the next call after the backoff tries Redis again.
// docs/state.md says what happens to turns written during an outage.
#include <atomic>
#include <cstdint>
#include <memory>

#include "state/response_cache.h"
#include "state/session_store.h"

namespace parley::state {

struct FailoverStats {
  std::atomic<uint64_t> fallbacks{0};  // operations served locally because Redis failed
  std::atomic<bool> degraded{false};   // the last Redis operation (before any: the startup check) failed
};

// `what`: the records' name in the outage warnings ("sessions", "stored responses").
std::unique_ptr<SessionStore> make_failover_session_store(std::unique_ptr<SessionStore> redis,
                                                          std::unique_ptr<SessionStore> local,
                                                          std::shared_ptr<FailoverStats> stats,
                                                          const std::string& what = "sessions");
std::unique_ptr<ResponseCache> make_failover_response_cache(std::unique_ptr<ResponseCache> redis,
                                                            std::unique_ptr<ResponseCache> local,
                                                            std::shared_ptr<FailoverStats> stats);

}  // namespace parley::state
