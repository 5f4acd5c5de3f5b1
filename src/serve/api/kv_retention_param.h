#pragma once
// The per-request KV retention policy (docs/kv-policies.md):
//   "kv_retention": {"policy": "window", "window": 128}
// or the policy name alone ("kv_retention": "sink"). Fields a policy does
// not use are refused, missing ones take the engine's defaults; every error
// is a 400 naming "kv_retention".
#include <cstdint>
#include <optional>

#include "engine/request.h"
#include "serve/api/json_fields.h"

namespace parley::serve {

// nullopt when the body has no kv_retention (the server's default applies).
std::optional<KvRetention> parse_kv_retention(const json& body, int32_t context_length);

}  // namespace parley::serve
