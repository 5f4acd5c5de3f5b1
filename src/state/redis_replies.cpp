#include "state/redis_replies.h"

namespace parley::state {

RedisReply checked(RedisReply reply) {
  if (reply.type != RedisReply::Type::Error) return reply;
  for (const char* transient :
       {"LOADING", "READONLY", "MASTERDOWN", "BUSY", "NOAUTH", "MISCONF", "CLUSTERDOWN", "TRYAGAIN"})
    if (reply.str.rfind(transient, 0) == 0) throw RedisUnavailable("redis: " + reply.str);
  throw Error("redis: " + reply.str);
}

RedisReply eval(RedisPool& pool, const std::string& script, const std::vector<std::string>& keys,
                const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"EVAL", script, std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return checked(pool.command(argv));
}

}  // namespace parley::state
