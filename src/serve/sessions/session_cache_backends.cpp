#include "serve/sessions/session_cache_backends.h"

#include <cstdio>

#include "state/redis_client.h"
#include "util/error.h"

namespace parley::serve {
namespace {

// A replica that silently kept its state locally would split every user's
// sessions from the other replicas', so a Redis that fails its check stops
// the start unless the operator allowed it.
void check_redis(state::RedisPool& pool, const StateBackendOptions& o, state::FailoverStats& stats) {
  try {
    pool.check();
  } catch (const state::RedisUnavailable& e) {
    const std::string url = state::mask_redis_url(o.redis_url);
    if (!o.redis_optional)
      throw Error("--redis-url " + url + ": " + e.what() + " (--redis-optional starts with local state instead)");
    std::fprintf(stderr,
                 "parley: warning: --redis-url %s: %s (--redis-optional: starting with local state; sessions and "
                 "cached answers stay on this replica until Redis answers)\n",
                 url.c_str(), e.what());
    stats.degraded = true;
  }
}

}  // namespace

StateBackends::StateBackends(const StateBackendOptions& o) {
  auto local_sessions = state::make_local_session_store(o.state_db);
  auto local_responses = state::make_local_session_store(o.state_db, "response");
  auto local_cache = o.response_cache_bytes > 0 ? state::make_local_response_cache(o.response_cache_bytes) : nullptr;
  if (o.redis_url.empty()) {
    sessions_ = std::move(local_sessions);
    responses_ = std::move(local_responses);
    cache_ = std::move(local_cache);
  } else {
    pool_ = std::make_shared<state::RedisPool>(state::parse_redis_url(o.redis_url));
    failover_ = std::make_shared<state::FailoverStats>();
    check_redis(*pool_, o, *failover_);
    sessions_ = state::make_failover_session_store(state::make_redis_session_store(pool_), std::move(local_sessions),
                                                   failover_);
    responses_ = state::make_failover_session_store(state::make_redis_session_store(pool_, "response"),
                                                    std::move(local_responses), failover_, "stored responses");
    if (local_cache)
      cache_ = state::make_failover_response_cache(state::make_redis_response_cache(pool_), std::move(local_cache),
                                                   failover_);
  }
  if (!o.static_answers.empty()) static_answers_ = std::make_unique<state::StaticAnswers>(o.static_answers);
  turn_leases_ = std::make_unique<TurnLeases>(*sessions_, o.lock_lease);
}

StateBackends::~StateBackends() = default;

void StateBackends::attach(StateServices& services) const {
  services.sessions = sessions_.get();
  services.turn_leases = turn_leases_.get();
  services.responses = responses_.get();
  services.response_cache = cache_.get();
  services.static_answers = static_answers_.get();
  services.failover = failover_;
}

}  // namespace parley::serve
