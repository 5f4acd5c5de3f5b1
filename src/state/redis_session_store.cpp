// Sessions in Redis, shared by every replica (key layout: docs/state.md):
//   parley:session:{id}            the session as JSON (plus "_idx", the index keys it is listed in), PX = ttl
//   parley:sessions:k:{key}        sorted set of the ids of API key {key}, score = updated_ms
//   parley:sessions:k:{key}:u:{user}   the same for one user of that key
//   parley:lock:session:{id}       the turn lock: owner, PX = the lease, renewed by its owner
// A store of another kind ("response") has the same layout under its own
// names: parley:response:{id}, parley:responses:k:{key}, parley:lock:response:{id}.
// Changes run as Lua scripts, so they are atomic across replicas.
#include <algorithm>

#include "state/redis_client.h"
#include "state/redis_replies.h"
#include "state/session_rules.h"

namespace parley::state {
namespace {

// Adds the id to an index and keeps the index alive as long as its newest session.
constexpr const char* kIndexFunction = R"lua(
local function index(key, score, id, ttl)
  redis.call('ZADD', key, score, id)
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
local function unindex(raw, id)
  if raw then
    for _, key in ipairs(cjson.decode(raw)._idx or {}) do redis.call('ZREM', key, id) end
  end
end
)lua";

// KEYS: session, index keys. ARGV: session JSON, ttl ms, updated_ms, id.
const std::string kPutScript = std::string(kIndexFunction) + R"lua(
unindex(redis.call('GET', KEYS[1]), ARGV[4])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
for i = 2, #KEYS do index(KEYS[i], ARGV[3], ARGV[4], tonumber(ARGV[2])) end
return 1
)lua";

// KEYS: session. ARGV: turn JSON, now ms. Appends, trims, renews the TTL.
const std::string kAppendScript = std::string(kIndexFunction) + R"lua(
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local s = cjson.decode(raw)
local turns = s.turns or {}
turns[#turns + 1] = cjson.decode(ARGV[1])
local drop = #turns - math.max(tonumber(s.max_turns) or 0, 0)
if drop > 0 then
  local kept = {}
  for i = drop + 1, #turns do kept[#kept + 1] = turns[i] end
  turns = kept
end
s.turns = turns
local now = tonumber(ARGV[2])
local ttl = math.max(tonumber(s.ttl_s) * 1000, 1)
s.updated_ms = now
s.expires_ms = now + ttl
redis.call('SET', KEYS[1], cjson.encode(s), 'PX', ttl)
for _, key in ipairs(s._idx or {}) do index(key, now, s.id, ttl) end
return 1
)lua";

// KEYS: session. ARGV: id.
const std::string kRemoveScript = std::string(kIndexFunction) + R"lua(
local raw = redis.call('GET', KEYS[1])
unindex(raw, ARGV[1])
return redis.call('DEL', KEYS[1])
)lua";

// KEYS: lock. ARGV: owner. Compare-and-delete: only the owner unlocks.
constexpr const char* kUnlockScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
)lua";

// KEYS: lock. ARGV: owner, ttl ms. Compare-and-pexpire: only the owner renews.
constexpr const char* kRenewScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
)lua";

// Index keys hold user and key names: ':' and '%' are escaped so that no
// two (key, user) pairs share an index.
std::string escape(const std::string& part) {
  std::string out;
  for (char c : part) {
    if (c == '%') out += "%25";
    else if (c == ':') out += "%3A";
    else out += c;
  }
  return out;
}


std::optional<Session> parse_live(const RedisReply& reply, int64_t now) {
  if (reply.type != RedisReply::Type::String) return std::nullopt;
  Session s = session_from_json(nlohmann::json::parse(reply.str));
  if (s.expires_ms <= now) return std::nullopt;
  return s;
}

class RedisSessionStore : public SessionStore {
 public:
  RedisSessionStore(std::shared_ptr<RedisPool> pool, std::string kind) : pool_(std::move(pool)), kind_(std::move(kind)) {}

  void put(const Session& s) override {
    const Session stored = prepared_for_put(s, now_ms());
    std::vector<std::string> keys = {session_key(stored.id), index_key(stored.api_key, "")};
    if (!stored.user.empty()) keys.push_back(index_key(stored.api_key, stored.user));
    nlohmann::json j = to_json(stored, true);
    j["_idx"] = std::vector<std::string>(keys.begin() + 1, keys.end());
    eval(*pool_, kPutScript, keys,
         {dump_lenient(j), std::to_string(std::max<int64_t>(stored.ttl_s * 1000, 1)),
          std::to_string(stored.updated_ms), stored.id});
  }

  std::optional<Session> get(const std::string& id) override {
    return parse_live(checked(pool_->command({"GET", session_key(id)})), now_ms());
  }

  bool remove(const std::string& id) override {
    return eval(*pool_, kRemoveScript, {session_key(id)}, {id}).integer == 1;
  }

  SessionPage list(const std::string& user, const std::string& api_key, const std::string& cursor,
                   int limit) override;

  bool append_turn(const std::string& id, const Turn& turn) override {
    const nlohmann::json t = {{"user", turn.user}, {"assistant", turn.assistant}, {"created_ms", turn.created_ms}};
    return eval(*pool_, kAppendScript, {session_key(id)}, {dump_lenient(t), std::to_string(now_ms())}).integer == 1;
  }

  bool try_lock(const std::string& id, const std::string& owner, std::chrono::milliseconds ttl) override {
    const RedisReply r = checked(pool_->command({"SET", lock_key(id), owner, "NX", "PX", lock_ms(ttl)}));
    return r.type == RedisReply::Type::String;  // "OK"; nil when held
  }

  bool renew(const std::string& id, const std::string& owner, std::chrono::milliseconds ttl) override {
    return eval(*pool_, kRenewScript, {lock_key(id)}, {owner, lock_ms(ttl)}).integer == 1;
  }

  void unlock(const std::string& id, const std::string& owner) override {
    eval(*pool_, kUnlockScript, {lock_key(id)}, {owner});
  }

 private:
  std::string session_key(const std::string& id) const { return redis_key(kind_ + ":" + id); }
  std::string index_key(const std::string& api_key, const std::string& user) const {
    std::string key = redis_key(kind_ + "s:k:" + escape(api_key));
    return user.empty() ? key : key + ":u:" + escape(user);
  }
  std::string lock_key(const std::string& id) const { return redis_key("lock:" + kind_ + ":" + id); }
  static std::string lock_ms(std::chrono::milliseconds ttl) { return std::to_string(std::max<int64_t>(ttl.count(), 1)); }

  std::shared_ptr<RedisPool> pool_;
  std::string kind_;
};

// Walks the index newest first from the cursor, in batches, reading the
// sessions themselves; ids whose session expired are dropped from the index.
SessionPage RedisSessionStore::list(const std::string& user, const std::string& api_key, const std::string& cursor,
                                    int limit) {
  const size_t want = static_cast<size_t>(std::max(limit, 0)) + 1;  // one more: is there a next page?
  const std::string index = index_key(api_key, user);
  std::optional<ListPosition> after;
  if (!cursor.empty()) after = decode_cursor(cursor);
  const std::string max = after ? std::to_string(after->updated_ms) : "+inf";
  const size_t batch = std::max<size_t>(want * 2, 16);
  const int64_t now = now_ms();
  std::vector<Session> found;
  std::vector<std::string> stale = {"ZREM", index};  // removed at the end: offsets stay valid
  for (size_t offset = 0; found.size() < want; offset += batch) {
    const RedisReply range = checked(pool_->command({"ZREVRANGEBYSCORE", index, max, "-inf", "WITHSCORES", "LIMIT",
                                                      std::to_string(offset), std::to_string(batch)}));
    std::vector<std::string> ids;
    for (size_t i = 0; i + 1 < range.elements.size(); i += 2) {
      const ListPosition p{std::stoll(range.elements[i + 1].str), range.elements[i].str};
      if (!after || listed_before(*after, p)) ids.push_back(p.id);
    }
    if (!ids.empty()) {
      std::vector<std::string> mget = {"MGET"};
      for (const std::string& id : ids) mget.push_back(session_key(id));
      const RedisReply values = checked(pool_->command(mget));
      for (size_t i = 0; i < ids.size() && i < values.elements.size(); ++i) {
        std::optional<Session> s = parse_live(values.elements[i], now);
        if (!s) stale.push_back(ids[i]);
        else if (s->api_key == api_key && (user.empty() || s->user == user) && found.size() < want)
          found.push_back(std::move(*s));
      }
    }
    if (range.elements.size() < batch * 2) break;  // the index ends here
  }
  if (stale.size() > 2) checked(pool_->command(stale));
  SessionPage page;
  if (found.size() == want) {
    found.pop_back();
    if (!found.empty()) page.next_cursor = encode_cursor(position_of(found.back()));
  }
  for (Session& s : found) s.turns.clear();
  page.sessions = std::move(found);
  return page;
}

}  // namespace

std::unique_ptr<SessionStore> make_redis_session_store(std::shared_ptr<RedisPool> pool, const std::string& kind) {
  return std::make_unique<RedisSessionStore>(std::move(pool), kind);
}

}  // namespace parley::state
