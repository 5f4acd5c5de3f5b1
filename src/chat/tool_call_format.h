#pragma once
// How models write tool calls: the formats, recognised from a chat template's
// text, the text that starts a call, the GBNF grammar that forces well-formed
// calls, and the instructions for models whose template knows no tools.
// docs/chat-templates.md#tool-calls describes each format.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::chat {

enum class ToolCallFormat {
  Generic,  // {"tool_calls": [{"name": "NAME", "arguments": {...}}]}, asked for by generic_tool_instructions
  Hermes,   // <tool_call>\n{"name": "NAME", "arguments": {...}}\n</tool_call>: Hermes 2 Pro, Qwen2.5, Qwen3
  Llama3,   // {"name": "NAME", "parameters": {...}}, optionally after <|python_tag|>: Llama 3.1/3.2/3.3
  Mistral,  // [TOOL_CALLS] [{"name": "NAME", "arguments": {...}, "id": "abcdefghi"}]: Mistral v0.3
};

// The format a template's model writes, from distinctive text in the template;
// Generic when the template shows none.
ToolCallFormat detect_tool_call_format(std::string_view chat_template);
std::string_view tool_call_format_name(ToolCallFormat format);

// The text whose appearance in the output starts a tool call.
struct ToolSyntax {
  std::vector<std::string> triggers;        // anywhere in the output
  std::vector<std::string> start_triggers;  // only at the output's start (after whitespace and earlier calls)
};
ToolSyntax tool_syntax(ToolCallFormat format);

// A GBNF grammar (llama.cpp's format) for output that is only tool calls.
// `tools` are (name, args_rule): args_rule names a rule the caller defines that
// matches the arguments JSON object. `parallel`: one or more calls, else exactly
// one. Defines `root` and helper rules named "tc-..."; starts with the format's
// trigger text, so it also serves once a trigger has been seen. Everything it
// matches, OutputParser reads as calls. Throws parley::Error for no tools.
std::string tool_calls_gbnf(ToolCallFormat format, const std::vector<std::pair<std::string, std::string>>& tools,
                            bool parallel);

// The system-message text that describes `tools` (OpenAI's array of
// {type: "function", function: {name, description, parameters}}) and asks for
// the Generic format, for templates that take no tools.
std::string generic_tool_instructions(const nlohmann::ordered_json& tools);
// An assistant message's OpenAI tool_calls written in the Generic format, as
// the model would have answered them (for templates that take no tools).
std::string generic_tool_calls_text(const nlohmann::ordered_json& tool_calls);

// A new tool-call id: 9 letters and digits for Mistral (its template demands
// them), "call_" and 24 of them otherwise.
std::string new_tool_call_id(ToolCallFormat format);

}  // namespace parley::chat
