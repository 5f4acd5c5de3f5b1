#pragma once
// Rules every session store applies the same way (internal to src/state):
// trimming, TTL renewal, and the newest-first order with its opaque cursor.
#include <cstdint>
#include <string>

#include "state/session.h"

namespace parley::state {

// Keeps the last max_turns turns (none when max_turns <= 0).
void trim_turns(Session& s);
// Marks the session changed at `now`: updated_ms = now, expires_ms = now + ttl.
void touch(Session& s, int64_t now);
// A session as put() stores it: created_ms defaulted, trimmed, touched.
Session prepared_for_put(const Session& s, int64_t now);

// JSON text for storage: invalid UTF-8 in user text becomes U+FFFD instead
// of failing the turn.
std::string dump_lenient(const nlohmann::json& j);

// Position of a session in a listing: newest updated_ms first, ties by id
// descending (the order of Redis's ZREVRANGE on a sorted set scored by updated_ms).
struct ListPosition {
  int64_t updated_ms = 0;
  std::string id;
};
bool listed_before(const ListPosition& a, const ListPosition& b);
ListPosition position_of(const Session& s);
std::string encode_cursor(const ListPosition& p);
ListPosition decode_cursor(const std::string& cursor);  // throws parley::Error when malformed

}  // namespace parley::state
