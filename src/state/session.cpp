#include "state/session.h"

#include <chrono>
#include <fstream>

#include "util/error.h"

namespace parley::state {

std::string new_session_id() {
  unsigned char bytes[16];
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(bytes), sizeof bytes)) throw Error("cannot read /dev/urandom");
  static const char* hex = "0123456789abcdef";
  std::string id;
  for (unsigned char b : bytes) {
    id += hex[b >> 4];
    id += hex[b & 15];
  }
  return id;
}

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

nlohmann::json to_json(const Session& s, bool with_turns) {
  nlohmann::json j = {{"id", s.id},
                      {"user", s.user},
                      {"api_key", s.api_key},
                      {"system_prompt", s.system_prompt},
                      {"max_turns", s.max_turns},
                      {"ttl_s", s.ttl_s},
                      {"created_ms", s.created_ms},
                      {"updated_ms", s.updated_ms},
                      {"expires_ms", s.expires_ms}};
  if (with_turns) {
    j["turns"] = nlohmann::json::array();
    for (const Turn& t : s.turns)
      j["turns"].push_back({{"user", t.user}, {"assistant", t.assistant}, {"created_ms", t.created_ms}});
  }
  if (!s.payload.empty()) j["payload"] = s.payload;
  if (!s.model.empty()) j["model"] = s.model;
  return j;
}

namespace {

// Numbers may come back as doubles from Redis's Lua cjson (1.7e12 is exact).
int64_t integer_field(const nlohmann::json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_number()) throw Error(std::string("session JSON: missing number '") + name + "'");
  return it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
}

std::string string_field(const nlohmann::json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Session session_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("session JSON: expected an object");
  Session s;
  s.id = string_field(j, "id");
  if (s.id.empty()) throw Error("session JSON: missing 'id'");
  s.user = string_field(j, "user");
  s.api_key = string_field(j, "api_key");
  s.system_prompt = string_field(j, "system_prompt");
  s.max_turns = static_cast<int32_t>(integer_field(j, "max_turns"));
  s.ttl_s = integer_field(j, "ttl_s");
  s.created_ms = integer_field(j, "created_ms");
  s.updated_ms = integer_field(j, "updated_ms");
  s.expires_ms = integer_field(j, "expires_ms");
  s.payload = string_field(j, "payload");
  s.model = string_field(j, "model");
  // cjson (Redis's Lua) writes an empty array as {}: both mean no turns.
  const auto turns = j.find("turns");
  if (turns != j.end() && turns->is_array()) {
    for (const auto& t : *turns)
      s.turns.push_back({string_field(t, "user"), string_field(t, "assistant"), integer_field(t, "created_ms")});
  }
  return s;
}

}  // namespace parley::state
