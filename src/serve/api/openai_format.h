#pragma once
// JSON shapes of OpenAI's chat.completion / text_completion responses and of
// their stream chunks (chat.completion.chunk), usage and log-probabilities.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chat/output_parser.h"
#include "serve/api/choice.h"
#include "serve/api/json_fields.h"
#include "tokenizer/tokenizer.h"

namespace parley::serve {

enum class Api { Chat, Completions };

// What every chunk and response of one request shares.
struct ResponseMeta {
  Api api = Api::Chat;
  std::string id;  // chatcmpl-... / cmpl-...
  int64_t created = 0;
  std::string model;
  std::string fingerprint;
  bool logprobs = false;  // the request asked for log-probabilities
  // Chat answers whose text is split into content, reasoning and tool calls
  // (a template with thinking markers, or tools offered): the options.
  std::optional<chat::OutputParser::Options> parsing;
};
ResponseMeta make_meta(Api api, std::string model, std::string fingerprint, bool logprobs);
std::string random_id(const char* prefix);  // prefix + 24 random alphanumerics

json usage_json(const Usage& u);

// One choice's piece of a stream: its new text, the log-probabilities of the
// tokens behind it (starting at character `text_offset` of the choice's
// text), and the finish reason once it ended. A chat choice's first chunk
// carries the role.
struct ChunkPiece {
  size_t index = 0;
  std::string text;
  std::vector<Event> tokens;
  size_t text_offset = 0;
  bool first = false;
  std::optional<FinishReason> finish;
  bool called = false;  // the choice made tool calls (finish_reason "tool_calls")
  std::string reasoning{};                        // delta.reasoning_content
  std::vector<chat::ToolCallDelta> tool_calls{};  // delta.tool_calls
};
json stream_chunk(const ResponseMeta& meta, const ChunkPiece& piece, const Tokenizer& tok);
// finish_reason "tool_calls" for an answer that ended with calls, else the engine's reason.
json finish_json(std::optional<FinishReason> r, bool called);
// The last chunk with stream_options.include_usage: no choices, the usage.
json usage_chunk(const ResponseMeta& meta, const Usage& usage);
// A complete (non-streamed) response.
json full_response(const ResponseMeta& meta, const std::vector<Choice>& choices, const Tokenizer& tok);

}  // namespace parley::serve
