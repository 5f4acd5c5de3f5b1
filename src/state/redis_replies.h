#pragma once
// Reading Redis replies in the Redis-backed stores (internal to src/state).
#include <string>

#include "state/redis_client.h"

namespace parley::state {

// The reply itself, unless it is an error: errors that mean "this server
// cannot serve now" (LOADING, READONLY, MASTERDOWN, BUSY, NOAUTH, MISCONF,
// CLUSTERDOWN, TRYAGAIN) throw RedisUnavailable, so callers fall back; any
// other error is a bug or misuse and throws parley::Error.
RedisReply checked(RedisReply reply);

// Redis EVAL of a Lua script.
RedisReply eval(RedisPool& pool, const std::string& script, const std::vector<std::string>& keys,
                const std::vector<std::string>& args);

}  // namespace parley::state
