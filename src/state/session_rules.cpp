#include "state/session_rules.h"

#include <charconv>

#include "util/error.h"

namespace parley::state {

void trim_turns(Session& s) {
  const size_t keep = s.max_turns > 0 ? static_cast<size_t>(s.max_turns) : 0;
  if (s.turns.size() > keep) s.turns.erase(s.turns.begin(), s.turns.end() - static_cast<std::ptrdiff_t>(keep));
}

void touch(Session& s, int64_t now) {
  s.updated_ms = now;
  s.expires_ms = now + s.ttl_s * 1000;
}

Session prepared_for_put(const Session& s, int64_t now) {
  Session copy = s;
  if (copy.created_ms == 0) copy.created_ms = now;
  trim_turns(copy);
  touch(copy, now);
  return copy;
}

std::string dump_lenient(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool listed_before(const ListPosition& a, const ListPosition& b) {
  return a.updated_ms != b.updated_ms ? a.updated_ms > b.updated_ms : a.id > b.id;
}

ListPosition position_of(const Session& s) { return {s.updated_ms, s.id}; }

// "<updated_ms>.<id>": clients treat it as opaque and only hand it back.
std::string encode_cursor(const ListPosition& p) { return std::to_string(p.updated_ms) + "." + p.id; }

ListPosition decode_cursor(const std::string& cursor) {
  ListPosition p;
  const size_t dot = cursor.find('.');
  const char* end = cursor.data() + (dot == std::string::npos ? cursor.size() : dot);
  const auto [ptr, ec] = std::from_chars(cursor.data(), end, p.updated_ms);
  if (dot == std::string::npos || ec != std::errc() || ptr != end || dot + 1 == cursor.size() || p.updated_ms < 0)
    throw Error("invalid cursor '" + cursor + "'");
  p.id = cursor.substr(dot + 1);
  return p;
}

}  // namespace parley::state
