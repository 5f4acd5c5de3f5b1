#pragma once
// Function tools of a chat request (`tools`, `tool_choice`,
// `parallel_tool_calls`): validated, handed to the chat template, and turned
// into the grammar that keeps the model's tool calls well-formed: from the
// first token when a call is required, from the format's opening text on
// when the model may choose (docs/api.md, "Tools").
#include <string>

#include <cstdint>
#include <optional>
#include <vector>

#include "chat/output_parser.h"
#include "chat/tool_call_format.h"
#include "tokenizer/tokenizer.h"
#include "serve/api/json_fields.h"
#include "serve/api/structured_output.h"

namespace parley::serve {

enum class ToolMode { None, Auto, Required, Named };

struct ToolSetup {
  nlohmann::ordered_json tools;  // as the client sent them; null: no tools
  ToolMode mode = ToolMode::None;
  std::string named;             // ToolMode::Named: the function's name
  bool parallel = true;          // several calls in one answer
  bool calls() const { return mode != ToolMode::None; }
};

// 400 naming the field for anything malformed: a tool that is not a
// function, a name outside [a-zA-Z0-9_-]{1,64} or given twice, parameters
// that are not a JSON schema this server can hold the model to, a
// tool_choice naming an unknown function.
// `raw`: the body's text (the parameters' properties keep their order).
ToolSetup parse_tools(const json& body, std::string_view raw);

// The grammar of the model's calls in `format`: none for ToolMode::None.
OutputGrammar tool_grammar(const ToolSetup& setup, chat::ToolCallFormat format, GrammarCache& cache);

// How a chat answer's text is split (content, reasoning_content,
// tool_calls): nullopt when it is all content (no tools, no thinking
// markers in the template). `prompt`: the rendered prompt's tokens (an
// answer that starts inside a thinking block is reasoning from its start).
std::optional<chat::OutputParser::Options> output_parsing(const Tokenizer& tok, const std::vector<int32_t>& prompt,
                                                          const ToolSetup& setup, chat::ToolCallFormat format);

}  // namespace parley::serve
