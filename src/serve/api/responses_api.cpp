#include "serve/api/responses_api.h"

#include <chrono>

#include "serve/api/openai_format.h"
#include "serve/api/request_fields.h"
#include "serve/transport/sse.h"
#include "state/session.h"

namespace parley::serve {
namespace {

constexpr size_t kMaxMetadataKeys = 16, kMaxMetadataKey = 64, kMaxMetadataValue = 512;

// An input item: a message, which may be an earlier response's output item sent back.
const MessageFormat kInputMessage = {{"type", "role", "content", "id", "status"},
                                     {"user", "assistant", "system", "developer"},
                                     {"input_text", "output_text"},
                                     {"type", "text", "annotations", "logprobs"}};

chat::ChatMessage parse_input_item(const json& item, size_t i) {
  const std::string param = "input[" + std::to_string(i) + "]";
  if (const auto type = item.is_object() ? get_string(item, "type") : std::nullopt; type && *type != "message")
    throw invalid_request("'" + param + ".type' '" + *type + "' is not supported by this server (only messages)",
                          param + ".type", "unsupported_parameter");
  return strict_message(item, param, kInputMessage);
}

std::vector<chat::ChatMessage> parse_input(const json& body, bool continues) {
  const json* input = get_field(body, "input");
  if (!input) {
    if (continues) return {};
    throw invalid_request("'input' is required", "input", "missing_required_parameter");
  }
  if (input->is_string()) return {{"user", input->get<std::string>()}};
  if (!input->is_array() || input->empty())
    throw invalid_request("'input' must be a string or a non-empty array of messages", "input", "invalid_type");
  std::vector<chat::ChatMessage> out;
  for (size_t i = 0; i < input->size(); ++i) out.push_back(parse_input_item((*input)[i], i));
  return out;
}

json parse_metadata(const json& body) {
  const json* m = get_field(body, "metadata");
  if (!m) return json::object();
  if (!m->is_object() || m->size() > kMaxMetadataKeys)
    throw invalid_request("'metadata' must be an object of at most 16 strings", "metadata", "invalid_type");
  for (const auto& [key, value] : m->items())
    if (key.size() > kMaxMetadataKey || !value.is_string() || value.get<std::string>().size() > kMaxMetadataValue)
      throw invalid_request("'metadata' keys must have at most 64 characters and its values be strings of at most 512",
                            "metadata." + key, "invalid_value");
  return *m;
}

// Plain text output only: text.format {"type": "text"}.
void check_text_config(const json& body) {
  const json* text = get_field(body, "text");
  if (!text) return;
  if (!text->is_object()) throw invalid_request("'text' must be an object", "text", "invalid_type");
  refuse_other_fields(*text, {"format"}, "text.");
  const json* format = get_field(*text, "format");
  if (!format) return;
  if (!format->is_object() || format->value("type", json()) != "text")
    throw invalid_request(
        "'text.format' must be {\"type\": \"text\"}: structured output is not supported by this server", "text.format",
        "unsupported_parameter");
  refuse_other_fields(*format, {"type"}, "text.format.");
}

json usage_of(const Choice& c) {
  return {{"input_tokens", c.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", c.cached_tokens}}},
          {"output_tokens", c.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", c.prompt_tokens + c.completion_tokens}};
}

const char* status_of(const Choice& c) {
  switch (c.finish) {
    case FinishReason::Stop: return "completed";
    case FinishReason::Error: return "failed";
    default: return "incomplete";
  }
}

json incomplete_details(const Choice& c) {
  switch (c.finish) {
    case FinishReason::Length: return {{"reason", "max_output_tokens"}};
    case FinishReason::Cancelled: return {{"reason", "cancelled"}};  // Parley's: shutdown
    case FinishReason::Deadline: return {{"reason", "deadline"}};    // Parley's: --max-request-timeout
    default: return nullptr;
  }
}

json output_text(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}};
}

json output_message(const ResponsesMeta& meta, const std::string& status, json content) {
  return {{"type", "message"},
          {"id", meta.item_id},
          {"status", status},
          {"role", "assistant"},
          {"content", std::move(content)}};
}

int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

ResponsesRequest parse_responses_request(const json& body, const ParamLimits& limits) {
  check_fields(body, RouteFields::Responses);
  ResponsesRequest r;
  r.previous_response_id = get_string(body, "previous_response_id").value_or("");
  r.input = parse_input(body, !r.previous_response_id.empty());
  r.instructions = get_string(body, "instructions");
  r.store = get_bool(body, "store").value_or(true);
  r.metadata = parse_metadata(body);
  check_text_config(body);
  if (const auto truncation = get_string(body, "truncation"); truncation && *truncation != "disabled")
    throw invalid_request("'truncation' must be 'disabled': a conversation longer than the context is refused",
                          "truncation", "unsupported_parameter");
  r.params = parse_generation_params(body, limits, LogprobsStyle::Chat, {"max_output_tokens", "stop", 2.0});
  return r;
}

ResponsesMeta responses_meta(const ResponsesRequest& request, std::string model, bool stored) {
  ResponsesMeta m;
  m.id = "resp_" + state::new_session_id();
  m.item_id = random_id("msg_");
  m.created_at = now_s();
  m.model = std::move(model);
  if (request.instructions) m.instructions = *request.instructions;
  if (!request.previous_response_id.empty()) m.previous_response_id = request.previous_response_id;
  m.metadata = request.metadata;
  m.temperature = request.params.sampling.temperature;
  m.top_p = request.params.sampling.top_p;
  if (request.params.max_tokens > 0) m.max_output_tokens = request.params.max_tokens;
  m.store = stored;
  return m;
}

json response_object(const ResponsesMeta& meta, const Choice* c) {
  json r = {{"id", meta.id},
            {"object", "response"},
            {"created_at", meta.created_at},
            {"status", c ? status_of(*c) : "in_progress"},
            {"error", nullptr},
            {"incomplete_details", c ? incomplete_details(*c) : json(nullptr)},
            {"instructions", meta.instructions},
            {"max_output_tokens", meta.max_output_tokens},
            {"model", meta.model},
            {"output", json::array()},
            {"parallel_tool_calls", false},
            {"previous_response_id", meta.previous_response_id},
            {"temperature", meta.temperature},
            {"top_p", meta.top_p},
            {"text", {{"format", {{"type", "text"}}}}},
            {"tool_choice", "none"},
            {"tools", json::array()},
            {"truncation", "disabled"},
            {"usage", c ? usage_of(*c) : json(nullptr)},
            {"metadata", meta.metadata},
            {"store", meta.store}};
  if (!c) return r;
  if (c->finish == FinishReason::Error) {
    r["error"] = {{"code", "server_error"}, {"message", "Generation failed: " + c->error}};
    return r;
  }
  r["completed_at"] = meta.completed_at;
  // The message is incomplete too when the answer was cut short.
  const char* item_status = c->finish == FinishReason::Stop ? "completed" : "incomplete";
  r["output"].push_back(output_message(meta, item_status, json::array({output_text(c->text)})));
  return r;
}

std::string ResponsesStream::event(const std::string& type, json data) {
  data["type"] = type;
  data["sequence_number"] = sequence_++;
  return sse_event(type, data);
}

std::string ResponsesStream::start() {
  // One statement per event: the sequence numbers follow the order of the calls.
  const json in_progress = response_object(meta_, nullptr);
  std::string out = event("response.created", {{"response", in_progress}});
  out += event("response.in_progress", {{"response", in_progress}});
  out += event("response.output_item.added",
               {{"output_index", 0}, {"item", output_message(meta_, "in_progress", json::array())}});
  out += event("response.content_part.added",
               {{"item_id", meta_.item_id}, {"output_index", 0}, {"content_index", 0}, {"part", output_text("")}});
  return out;
}

std::string ResponsesStream::text_delta(const std::string& text) {
  return event("response.output_text.delta", {{"item_id", meta_.item_id},
                                              {"output_index", 0},
                                              {"content_index", 0},
                                              {"delta", text},
                                              {"logprobs", json::array()}});
}

std::string ResponsesStream::end(const Choice& c) {
  const json response = response_object(meta_, &c);
  if (c.finish == FinishReason::Error) return event("response.failed", {{"response", response}});
  const json part = output_text(c.text);
  const json at = {{"item_id", meta_.item_id}, {"output_index", 0}, {"content_index", 0}};
  json text_done = at, part_done = at;
  text_done["text"] = c.text;
  text_done["logprobs"] = json::array();
  part_done["part"] = part;
  std::string out = event("response.output_text.done", text_done);
  out += event("response.content_part.done", part_done);
  out += event("response.output_item.done", {{"output_index", 0}, {"item", response["output"][0]}});
  out += event(c.finish == FinishReason::Stop ? "response.completed" : "response.incomplete", {{"response", response}});
  return out;
}

std::string encode_stored_response(const StoredResponse& r) {
  json conversation = json::array();
  for (const chat::ChatMessage& m : r.conversation) conversation.push_back({{"role", m.role}, {"content", m.content}});
  return dump_json({{"response", r.response}, {"conversation", std::move(conversation)}});
}

StoredResponse decode_stored_response(const std::string& payload) {
  const json j = json::parse(payload);
  StoredResponse r;
  r.response = j.at("response");
  for (const json& m : j.at("conversation"))
    r.conversation.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
  return r;
}

}  // namespace parley::serve
