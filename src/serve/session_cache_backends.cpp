#include "serve/session_cache_backends.h"

#include "state/redis_client.h"

namespace parley::serve {

StateBackends::StateBackends(const StateBackendOptions& o, StateServices& services) {
  auto local_sessions = state::make_local_session_store(o.state_db);
  auto local_cache = o.response_cache_bytes > 0 ? state::make_local_response_cache(o.response_cache_bytes) : nullptr;
  if (o.redis_url.empty()) {
    sessions_ = std::move(local_sessions);
    cache_ = std::move(local_cache);
  } else {
    pool_ = std::make_shared<state::RedisPool>(state::parse_redis_url(o.redis_url));
    services.failover = std::make_shared<state::FailoverStats>();
    sessions_ = state::make_failover_session_store(state::make_redis_session_store(pool_), std::move(local_sessions),
                                                   services.failover);
    if (local_cache)
      cache_ = state::make_failover_response_cache(state::make_redis_response_cache(pool_), std::move(local_cache),
                                                   services.failover);
  }
  if (!o.static_answers.empty()) static_answers_ = std::make_unique<state::StaticAnswers>(o.static_answers);
  turn_leases_ = std::make_unique<TurnLeases>(*sessions_, o.lock_lease);
  services.sessions = sessions_.get();
  services.turn_leases = turn_leases_.get();
  services.response_cache = cache_.get();
  services.static_answers = static_answers_.get();
}

StateBackends::~StateBackends() = default;

}  // namespace parley::serve
