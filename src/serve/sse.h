#pragma once
// Server-sent events framing, as OpenAI streams use it: one `data:` line per
// JSON chunk, a blank line after each, and `data: [DONE]` at the end.
#include <string>

#include "serve/http_message.h"

namespace parley::serve {

inline std::string sse_event(const nlohmann::json& data) { return "data: " + dump_json(data) + "\n\n"; }
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace parley::serve
