#pragma once
// OpenAI's Responses API (POST /v1/responses), text in and text out, on
// Parley's chat path: the request validated — a field the server cannot
// honour (tools, reasoning, a text format other than plain text, ...) is a
// 400 naming it —, the response object, the events of its stream, and the
// record a stored response keeps for `previous_response_id`.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "serve/transport/api_error.h"
#include "serve/api/choice.h"
#include "serve/api/generation_params.h"
#include "serve/api/prompt_input.h"

namespace parley::serve {

struct ResponsesRequest {
  std::vector<chat::ChatMessage> input;     // the input items as messages (developer → system)
  std::optional<std::string> instructions;  // a system message before everything; not carried to the next response
  GenerationParams params;                  // max_output_tokens → max_tokens
  bool store = true;
  std::string previous_response_id;  // "" for none
  json metadata = json::object();    // up to 16 string values, echoed back
};
// The body's fields: model (checked by the route), input, instructions,
// max_output_tokens, temperature, top_p, stream, store, previous_response_id,
// metadata, text (only {"format": {"type": "text"}}) and truncation (only
// "disabled").
ResponsesRequest parse_responses_request(const json& body, const ParamLimits& limits);

// What the response object and every event of one answer share.
struct ResponsesMeta {
  std::string id;       // resp_ + 32 hex digits (128 random bits: it names a stored response)
  std::string item_id;  // msg_...: the output message
  int64_t created_at = 0;
  int64_t completed_at = 0;  // set when the answer finished
  std::string model;
  json instructions = nullptr;
  json previous_response_id = nullptr;
  json metadata = json::object();
  double temperature = 1, top_p = 1;
  json max_output_tokens = nullptr;
  bool store = true;
};
ResponsesMeta responses_meta(const ResponsesRequest& request, std::string model, bool stored);

// The response object: in progress (no choice yet), or finished: status
// completed (stop), incomplete (length: max_output_tokens; cancelled,
// deadline) or failed (an engine error), with the output message and usage.
json response_object(const ResponsesMeta& meta, const Choice* c);

// The stream's named events, each with its sequence_number: response.created,
// response.in_progress, response.output_item.added,
// response.content_part.added; response.output_text.delta per piece of text;
// response.output_text.done, response.content_part.done,
// response.output_item.done and response.completed (response.incomplete when
// the answer was cut short). A failed answer ends with response.failed.
class ResponsesStream {
 public:
  explicit ResponsesStream(const ResponsesMeta& meta) : meta_(meta) {}
  std::string start();
  std::string text_delta(const std::string& text);
  std::string end(const Choice& c);

 private:
  std::string event(const std::string& type, json data);

  const ResponsesMeta& meta_;
  int64_t sequence_ = 0;
};

// A stored response: the response object, and the conversation a next
// response with this one as its previous_response_id continues (the input
// messages of this one and its predecessors and their answers, without
// instructions).
struct StoredResponse {
  json response;
  std::vector<chat::ChatMessage> conversation;
};
std::string encode_stored_response(const StoredResponse& r);
StoredResponse decode_stored_response(const std::string& payload);  // throws on a malformed payload

}  // namespace parley::serve
