#pragma once
// A conversation kept by the server (POST /v1/sessions): its metadata and its
// last turns. Stores keep it whole; the serve layer renders it into prompts.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parley::state {

struct Turn {
  std::string user;       // the user's message
  std::string assistant;  // the model's answer
  int64_t created_ms = 0;
};

struct Session {
  std::string id;             // 128-bit random, 32 lowercase hex digits
  std::string user;           // free-form owner label from the client ("" = none)
  std::string api_key;        // name of the API key that created it ("" = none); others cannot see it
  std::string system_prompt;  // kept across trimming
  std::string model;          // the LoRA adapter its turns run with ("" = the base model)
  int32_t max_turns = 5;      // turns kept (oldest dropped first)
  int64_t ttl_s = 86400;      // idle lifetime; every turn renews it
  int64_t created_ms = 0, updated_ms = 0, expires_ms = 0;  // unix milliseconds
  std::vector<Turn> turns;    // oldest first
  // What a record other than a chat session keeps instead of turns (a stored
  // response of POST /v1/responses: its JSON); "" for sessions.
  std::string payload;
};

// A fresh unguessable id (128 bits from the OS's random source).
std::string new_session_id();
int64_t now_ms();

nlohmann::json to_json(const Session& s, bool with_turns);
Session session_from_json(const nlohmann::json& j);  // what to_json(s, true) wrote

}  // namespace parley::state
