#include "chat/tool_call_format.h"

#include "util/error.h"
#include "util/random_text.h"

namespace parley::chat {
namespace {

bool mentions(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// A GBNF string literal for `text`.
std::string gbnf_literal(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

// The key a format's call object holds the arguments under.
std::string_view arguments_key(ToolCallFormat format) {
  return format == ToolCallFormat::Llama3 ? "parameters" : "arguments";
}

// One alternative per tool: the quoted name, then the arguments' key and rule.
std::string function_alternatives(ToolCallFormat format, const std::vector<std::pair<std::string, std::string>>& tools) {
  const std::string key = "\"" + std::string(arguments_key(format)) + "\":";
  std::string out;
  for (const auto& [name, args_rule] : tools) {
    if (!out.empty()) out += "\n    | ";
    out += gbnf_literal(nlohmann::json(name).dump()) + " tc-ws \",\" tc-ws " + gbnf_literal(key) + " tc-ws " + args_rule;
  }
  return out;
}

// The rule `root` for `call` (one call object or wrapper) repeated as the
// format separates calls.
std::string root_rule(ToolCallFormat format, bool parallel) {
  const std::string more = parallel ? " (tc-ws \",\" tc-ws tc-call)*" : "";
  switch (format) {
    case ToolCallFormat::Hermes:
      return std::string("root ::= tc-wrapped") + (parallel ? " (tc-ws tc-wrapped)*" : "") +
             "\ntc-wrapped ::= \"<tool_call>\" tc-ws tc-call tc-ws \"</tool_call>\"\n";
    case ToolCallFormat::Llama3:
      return std::string("root ::= \"<|python_tag|>\"? tc-call") + (parallel ? " (tc-ws tc-call)*" : "") + "\n";
    case ToolCallFormat::Mistral:
      return "root ::= \"[TOOL_CALLS]\" tc-ws \"[\" tc-ws tc-call" + more + " tc-ws \"]\"\n";
    case ToolCallFormat::Generic:
      return "root ::= \"{\\\"tool_calls\\\":\" tc-ws \"[\" tc-ws tc-call" + more + " tc-ws \"]\" tc-ws \"}\"\n";
  }
  throw Error("unknown tool-call format");
}

}  // namespace

ToolCallFormat detect_tool_call_format(std::string_view t) {
  if (mentions(t, "[TOOL_CALLS]")) return ToolCallFormat::Mistral;
  if (mentions(t, "<tool_call>")) return ToolCallFormat::Hermes;
  if (mentions(t, "<|start_header_id|>") && (mentions(t, "<|python_tag|>") || mentions(t, "ipython")))
    return ToolCallFormat::Llama3;
  return ToolCallFormat::Generic;
}

std::string_view tool_call_format_name(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::Generic: return "generic";
    case ToolCallFormat::Hermes: return "hermes";
    case ToolCallFormat::Llama3: return "llama3";
    case ToolCallFormat::Mistral: return "mistral";
  }
  return "unknown";
}

ToolSyntax tool_syntax(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::Hermes: return {{"<tool_call>"}, {}};
    case ToolCallFormat::Llama3: return {{"<|python_tag|>"}, {"{\"name\""}};
    case ToolCallFormat::Mistral: return {{"[TOOL_CALLS]"}, {}};
    case ToolCallFormat::Generic: return {{}, {"{\"tool_calls\""}};
  }
  return {};
}

// The call object starts exactly with {"name": so that Llama 3's start
// trigger is the grammar's first text; elsewhere a little whitespace is free.
std::string tool_calls_gbnf(ToolCallFormat format, const std::vector<std::pair<std::string, std::string>>& tools,
                            bool parallel) {
  if (tools.empty()) throw Error("tool_calls_gbnf: no tools");
  std::string g = root_rule(format, parallel);
  const bool with_id = format == ToolCallFormat::Mistral;
  g += std::string("tc-call ::= \"{\\\"name\\\":\" tc-ws tc-function") + (with_id ? " tc-id?" : "") + " tc-ws \"}\"\n";
  g += "tc-function ::= " + function_alternatives(format, tools) + "\n";
  if (with_id) {
    g += "tc-id ::= tc-ws \",\" tc-ws \"\\\"id\\\":\" tc-ws \"\\\"\" tc-alnum tc-alnum tc-alnum tc-alnum tc-alnum tc-alnum"
         " tc-alnum tc-alnum tc-alnum \"\\\"\"\n";
    g += "tc-alnum ::= [a-zA-Z0-9]\n";
  }
  g += "tc-ws ::= ([ \\t\\n] [ \\t\\n]?)?\n";
  return g;
}

std::string generic_tool_instructions(const nlohmann::ordered_json& tools) {
  std::string out = "You can call the following tools:\n";
  for (const auto& tool : tools) out += (tool.contains("function") ? tool["function"] : tool).dump(2) + "\n";
  out +=
      "\nTo call tools, answer with only a JSON object in this format, and nothing else:\n"
      "{\"tool_calls\": [{\"name\": \"<tool name>\", \"arguments\": {<the arguments as a JSON object>}}]}\n"
      "List several calls to call several tools at once. Otherwise answer normally.";
  return out;
}

std::string generic_tool_calls_text(const nlohmann::ordered_json& tool_calls) {
  nlohmann::ordered_json calls = nlohmann::ordered_json::array();
  for (const auto& call : tool_calls) {
    const auto& f = call.contains("function") ? call["function"] : call;
    nlohmann::ordered_json args = f.value("arguments", nlohmann::ordered_json::object());
    if (args.is_string()) args = nlohmann::ordered_json::parse(args.get<std::string>(), nullptr, false);
    calls.push_back({{"name", f.value("name", "")}, {"arguments", args.is_discarded() ? f["arguments"] : args}});
  }
  return nlohmann::ordered_json{{"tool_calls", calls}}.dump();
}

std::string new_tool_call_id(ToolCallFormat format) {
  return format == ToolCallFormat::Mistral ? random_alnum(9) : "call_" + random_alnum(24);
}

}  // namespace parley::chat
