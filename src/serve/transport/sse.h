#pragma once
// Server-sent events framing, as OpenAI streams use it: one `data:` line per
// JSON chunk, a blank line after each, and `data: [DONE]` at the end. Named
// events (Anthropic's Messages and OpenAI's Responses streams) put an
// `event:` line before the data.
#include <string>

#include "serve/transport/http_message.h"

namespace parley::serve {

inline std::string sse_event(const nlohmann::json& data) { return "data: " + dump_json(data) + "\n\n"; }
inline std::string sse_event(const std::string& name, const nlohmann::json& data) {
  return "event: " + name + "\n" + sse_event(data);
}
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace parley::serve
