#pragma once
// A small pool of hiredis connections to one Redis server
// (redis://[:password@]host:port/db), with reconnection and backoff. Every
// failure (refused, timed out, lost) is a RedisUnavailable; callers fall back
// to local state and the pool keeps trying to reconnect in the background of
// later calls (no call waits longer than the timeout).
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "state/response_cache.h"
#include "state/session_store.h"
#include "util/error.h"

namespace parley::state {

struct RedisUnavailable : Error {
  using Error::Error;
};

// A reply, flattened: nil, integer, string (bulk/status), error, or an array.
struct RedisReply {
  enum class Type { Nil, Integer, String, Error, Array } type = Type::Nil;
  int64_t integer = 0;
  std::string str;
  std::vector<RedisReply> elements;
};

struct RedisUrl {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
  std::string password;
};
RedisUrl parse_redis_url(const std::string& url);  // throws parley::Error (showing the URL masked)
// The URL with its password replaced by "***" (redis://:***@host:port/db), for
// messages and logs; works on URLs that do not parse too.
std::string mask_redis_url(const std::string& url);

class RedisPool {
 public:
  RedisPool(RedisUrl url, size_t connections = 4, std::chrono::milliseconds timeout = std::chrono::milliseconds(500));
  ~RedisPool();
  // One command; an Error reply is returned (not thrown); connection trouble throws RedisUnavailable.
  RedisReply command(const std::vector<std::string>& argv);
  // Several commands on one connection in one round trip.
  std::vector<RedisReply> pipeline(const std::vector<std::vector<std::string>>& commands);
  // Connects (AUTH and SELECT as the URL says) and PINGs; throws
  // RedisUnavailable naming the step that failed unless the answer is PONG
  // (an error reply such as NOAUTH fails too). The message holds no password.
  void check();
  bool healthy() const;  // the last call succeeded
  uint64_t failures() const;  // calls that threw RedisUnavailable

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Keys are namespaced: "parley:" + suffix.
std::string redis_key(const std::string& suffix);

// `kind`: as make_local_session_store's; its records' keys are parley:{kind}:{id}.
std::unique_ptr<SessionStore> make_redis_session_store(std::shared_ptr<RedisPool> pool,
                                                       const std::string& kind = "session");
std::unique_ptr<ResponseCache> make_redis_response_cache(std::shared_ptr<RedisPool> pool);

}  // namespace parley::state
