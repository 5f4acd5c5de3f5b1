#pragma once
// An answer as the engine's events, per choice: what the response cache
// stores, and what a cache hit or a static answer replays through the same
// responders as a generated answer (so a hit's content is byte-identical).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/request.h"
#include "serve/api/generation_params.h"

namespace parley::serve {

struct RecordedAnswer {
  std::vector<std::vector<Event>> choices;  // each ends with its final event
};

std::string encode_answer(const RecordedAnswer& answer);
// nullopt for bytes that are not an encoded answer (a corrupt entry is a miss).
std::optional<RecordedAnswer> decode_answer(const std::string& bytes);

// Only deterministic requests are cached: greedy, or an explicit seed.
bool is_cacheable(const GenerationParams& params);
// Who may be answered from one cache entry: clients of one model and, unless
// `tenant` is "" (a cache shared by every key), of one API key (its name).
struct CacheScope {
  std::string model_id, fingerprint, tenant;
  std::string output{};  // what the answer is held to (OutputGrammar::key); "" for free text
};
// Hex SHA-1 of the scope and, per engine request, the prompt tokens and every
// field that changes the output (a random seed is left out: it does not
// matter when greedy, and a seeded request's seed is in the key).
std::string response_cache_key(const CacheScope& scope, const std::vector<Request>& requests, bool seeded);

// A fixed text as a one-choice answer that finished with "stop".
RecordedAnswer fixed_answer(const std::string& text, int32_t prompt_tokens, int32_t completion_tokens);

}  // namespace parley::serve
