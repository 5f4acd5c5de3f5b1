#pragma once
// Anthropic's Messages API (POST /v1/messages) on Parley's chat path: the
// request's conversation and generation parameters, validated — a field the
// server cannot honour (tools, thinking, images, ...) is a 400 naming it —
// and the shapes of the answer: the message, the named events of its stream
// and Anthropic's error object.
#include <cstdint>
#include <string>
#include <vector>

#include "serve/transport/api_error.h"
#include "serve/api/choice.h"
#include "serve/api/generation_params.h"
#include "serve/transport/http_message.h"
#include "serve/api/prompt_input.h"

namespace parley::serve {

struct AnthropicRequest {
  std::vector<chat::ChatMessage> messages;  // `system` first, when given
  GenerationParams params;
};
// The body's fields: model (checked by the route), system, messages,
// max_tokens (required), temperature (0 … 1), top_p, top_k, stop_sequences,
// stream, metadata (user_id only).
AnthropicRequest parse_anthropic_request(const json& body, const ParamLimits& limits);

// What the message and every event of one answer share.
struct AnthropicMeta {
  std::string id;  // msg_...
  std::string model;
  int64_t input_tokens = 0;  // the prompt's tokens (known before the answer)
};
AnthropicMeta anthropic_meta(std::string model, int64_t input_tokens);

// The complete message of a finished choice.
json anthropic_message(const AnthropicMeta& meta, const Choice& c);
// The stream's events, in order: message_start (the message without content
// or stop reason), content_block_start, ping, content_block_delta per piece
// of text, content_block_stop, message_delta (stop reason, output tokens),
// message_stop. Each is `event: NAME` + `data: {"type": NAME, ...}`.
std::string anthropic_stream_start(const AnthropicMeta& meta);
std::string anthropic_text_delta(const std::string& text);
std::string anthropic_stream_end(const Choice& c);

// {"type": "error", "error": {"type": ..., "message": ...}}: the type follows
// the status (400 invalid_request_error, 401 authentication_error, 403
// permission_error, 404 not_found_error, 413 request_too_large, 429
// rate_limit_error, 503 overloaded_error, other 5xx api_error).
json anthropic_error(const ApiError& e);
HttpResponse anthropic_error_response(const ApiError& e);
std::string anthropic_stream_error(const ApiError& e);  // an `error` event

}  // namespace parley::serve
