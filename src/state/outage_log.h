#pragma once
// How the failover wrappers notice a Redis outage (internal to src/state):
// with_fallback() runs the Redis operation and, when it throws
// RedisUnavailable, counts a fallback, warns once per outage and runs the
// local one instead.
#include <memory>
#include <string>
#include <type_traits>

#include "state/failover.h"
#include "state/redis_client.h"

namespace parley::state {

class OutageLog {
 public:
  OutageLog(std::string what, std::shared_ptr<FailoverStats> stats);
  void failed(const RedisUnavailable& e);  // a fallback; the first of an outage warns on stderr
  void succeeded();                        // ends an outage (logged once)

 private:
  std::string what_;
  std::shared_ptr<FailoverStats> stats_;
};

template <class RedisOp, class LocalOp>
auto with_fallback(OutageLog& log, RedisOp&& redis_op, LocalOp&& local_op) {
  try {
    if constexpr (std::is_void_v<std::invoke_result_t<RedisOp>>) {
      redis_op();
      log.succeeded();
      return;
    } else {
      auto result = redis_op();
      log.succeeded();
      return result;
    }
  } catch (const RedisUnavailable& e) {
    log.failed(e);
  }
  return local_op();
}

}  // namespace parley::state
