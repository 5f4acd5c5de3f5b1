#include "serve/api/anthropic_messages.h"

#include "serve/api/openai_format.h"
#include "serve/api/request_fields.h"
#include "serve/transport/sse.h"

namespace parley::serve {
namespace {

const MessageFormat kAnthropicMessage = {{"role", "content"}, {"user", "assistant", "system"}, {"text"}};

// A last assistant message asks Anthropic's API to continue it (prefill);
// the chat template would close it as a turn of its own instead.
void check_anthropic_last_is_user(const std::vector<chat::ChatMessage>& messages) {
  if (messages.back().role == "assistant") {
    const std::string param = "messages[" + std::to_string(messages.size() - 1) + "].role";
    throw invalid_request(
        "The last message must be a user message: continuing an assistant message (prefill) is not "
        "supported by this server",
        param, "unsupported_parameter");
  }
}

// metadata.user_id: the client's end user, logged as OpenAI's `user` is.
std::string anthropic_user(const json& body) {
  const json* m = get_field(body, "metadata");
  if (!m) return "";
  if (!m->is_object()) throw invalid_request("'metadata' must be an object", "metadata", "invalid_type");
  refuse_other_fields(*m, {"user_id"}, "metadata.");
  const json* user = get_field(*m, "user_id");
  if (!user || user->is_null()) return "";
  if (!user->is_string())
    throw invalid_request("'metadata.user_id' must be a string", "metadata.user_id", "invalid_type");
  return user->get<std::string>();
}

const char* anthropic_error_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

json anthropic_stop_reason(const Choice& c) {
  switch (c.finish) {
    case FinishReason::Stop: return c.stop_string.empty() ? "end_turn" : "stop_sequence";
    case FinishReason::Length: return "max_tokens";
    case FinishReason::Cancelled: return "cancelled";  // Parley's: shutdown
    case FinishReason::Deadline: return "deadline";    // Parley's: --max-request-timeout
    default: return nullptr;
  }
}

json anthropic_stop_sequence(const Choice& c) { return c.stop_string.empty() ? json(nullptr) : json(c.stop_string); }

std::string anthropic_event(const char* name, json data) {
  data["type"] = name;
  return sse_event(name, data);
}

}  // namespace

AnthropicRequest parse_anthropic_request(const json& body, const ParamLimits& limits) {
  check_fields(body, RouteFields::Messages);
  AnthropicRequest r;
  if (const json* system = get_field(body, "system"))
    r.messages.push_back({"system", content_text(*system, "system", {"text"})});
  const json* messages = get_field(body, "messages");
  if (!messages) throw invalid_request("'messages' is required", "messages", "missing_required_parameter");
  if (!messages->is_array() || messages->empty())
    throw invalid_request("'messages' must be a non-empty array", "messages", "invalid_type");
  for (size_t i = 0; i < messages->size(); ++i)
    r.messages.push_back(strict_message((*messages)[i], "messages[" + std::to_string(i) + "]", kAnthropicMessage));
  check_anthropic_last_is_user(r.messages);
  if (!get_field(body, "max_tokens"))
    throw invalid_request("'max_tokens' is required", "max_tokens", "missing_required_parameter");
  r.params = parse_generation_params(body, limits, LogprobsStyle::Chat, {"max_tokens", "stop_sequences", 1.0});
  r.params.user = anthropic_user(body);
  return r;
}

AnthropicMeta anthropic_meta(std::string model, int64_t input_tokens) {
  return {random_id("msg_"), std::move(model), input_tokens};
}

json anthropic_message(const AnthropicMeta& meta, const Choice& c) {
  return {{"id", meta.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", meta.model},
          {"content", json::array({{{"type", "text"}, {"text", c.text}}})},
          {"stop_reason", anthropic_stop_reason(c)},
          {"stop_sequence", anthropic_stop_sequence(c)},
          {"usage", {{"input_tokens", c.prompt_tokens}, {"output_tokens", c.completion_tokens}}}};
}

std::string anthropic_stream_start(const AnthropicMeta& meta) {
  const json message = {{"id", meta.id},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"model", meta.model},
                        {"content", json::array()},
                        {"stop_reason", nullptr},
                        {"stop_sequence", nullptr},
                        {"usage", {{"input_tokens", meta.input_tokens}, {"output_tokens", 0}}}};
  return anthropic_event("message_start", {{"message", message}}) +
         anthropic_event("content_block_start", {{"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}}) +
         anthropic_event("ping", json::object());
}

std::string anthropic_text_delta(const std::string& text) {
  return anthropic_event("content_block_delta", {{"index", 0}, {"delta", {{"type", "text_delta"}, {"text", text}}}});
}

std::string anthropic_stream_end(const Choice& c) {
  return anthropic_event("content_block_stop", {{"index", 0}}) +
         anthropic_event(
             "message_delta",
             {{"delta", {{"stop_reason", anthropic_stop_reason(c)}, {"stop_sequence", anthropic_stop_sequence(c)}}},
              {"usage", {{"output_tokens", c.completion_tokens}}}}) +
         anthropic_event("message_stop", json::object());
}

json anthropic_error(const ApiError& e) {
  return {{"type", "error"}, {"error", {{"type", anthropic_error_type(e.status())}, {"message", e.what()}}}};
}

HttpResponse anthropic_error_response(const ApiError& e) { return json_response(e.status(), anthropic_error(e)); }

std::string anthropic_stream_error(const ApiError& e) { return sse_event("error", anthropic_error(e)); }

}  // namespace parley::serve
