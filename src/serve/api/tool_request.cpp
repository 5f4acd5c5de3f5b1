#include "serve/api/tool_request.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>
#include <vector>

#include "chat/reasoning.h"
#include "engine/grammar/grammar.h"
#include "serve/transport/api_error.h"
#include "util/error.h"

namespace parley::serve {
namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

// A function without parameters takes an empty object.
nlohmann::ordered_json parameters_of(const nlohmann::ordered_json& function) {
  const auto it = function.find("parameters");
  if (it == function.end() || it->is_null()) return {{"type", "object"}, {"properties", nlohmann::ordered_json::object()}};
  return *it;
}

std::string args_rule(size_t i) { return "tool-" + std::to_string(i) + "-args"; }

std::string args_gbnf(const nlohmann::ordered_json& function, size_t i) {
  const std::string param = "tools[" + std::to_string(i) + "].function.parameters";
  try {
    return grammar::json_schema_to_gbnf_ordered(parameters_of(function), args_rule(i));
  } catch (const Error& e) {
    throw invalid_request("'" + param + "' cannot be used: " + e.what(), param, "invalid_schema");
  }
}

void check_tool(const nlohmann::ordered_json& tool, size_t i, std::set<std::string>& names) {
  const std::string at = "tools[" + std::to_string(i) + "]";
  if (!tool.is_object()) throw invalid_request("'" + at + "' must be an object", at, "invalid_type");
  refuse_other_fields(tool, {"type", "function"}, at + ".");
  if (tool.value("type", "") != "function")
    throw invalid_request("'" + at + ".type' must be 'function' (the only tool type this server runs)", at + ".type",
                          "invalid_value");
  const auto f = tool.find("function");
  if (f == tool.end() || !f->is_object())
    throw invalid_request("'" + at + ".function' must be an object", at + ".function", "invalid_type");
  refuse_other_fields(*f, {"name", "description", "parameters", "strict"}, at + ".function.");
  const auto name = get_string(*f, "name");
  if (!name || !valid_name(*name))
    throw invalid_request("'" + at + ".function.name' must match [a-zA-Z0-9_-]{1,64}", at + ".function.name",
                          "invalid_value");
  if (!names.insert(*name).second)
    throw invalid_request("'" + at + ".function.name': '" + *name + "' is given twice", at + ".function.name",
                          "invalid_value");
  get_string(*f, "description");
  get_bool(*f, "strict");  // type-checked: calls always follow the parameters' schema
  const auto p = f->find("parameters");
  if (p != f->end() && !p->is_null() && !p->is_object())
    throw invalid_request("'" + at + ".function.parameters' must be a JSON schema object",
                          at + ".function.parameters", "invalid_type");
}

void parse_choice(const json& body, ToolSetup& s, const std::set<std::string>& names) {
  const json* c = get_field(body, "tool_choice");
  s.mode = s.tools.is_null() ? ToolMode::None : ToolMode::Auto;
  if (!c) return;
  if (c->is_string()) {
    const std::string v = c->get<std::string>();
    if (v == "none") s.mode = ToolMode::None;
    else if (v == "auto" || v == "required") s.mode = v == "auto" ? ToolMode::Auto : ToolMode::Required;
    else throw invalid_request("'tool_choice' must be 'none', 'auto', 'required' or a function", "tool_choice", "invalid_value");
  } else if (c->is_object()) {
    refuse_other_fields(*c, {"type", "function"}, "tool_choice.");
    const json* f = get_field(*c, "function");
    const auto name = f && f->is_object() ? get_string(*f, "name") : std::nullopt;
    if (c->value("type", "") != "function" || !name)
      throw invalid_request("'tool_choice' must be {\"type\": \"function\", \"function\": {\"name\": ...}}",
                            "tool_choice", "invalid_value");
    refuse_other_fields(*f, {"name"}, "tool_choice.function.");
    if (!names.count(*name))
      throw invalid_request("'tool_choice' names '" + *name + "', which is not in 'tools'", "tool_choice",
                            "invalid_value");
    s.mode = ToolMode::Named;
    s.named = *name;
  } else {
    throw invalid_request("'tool_choice' must be a string or an object", "tool_choice", "invalid_type");
  }
  if (s.mode != ToolMode::None && s.tools.is_null())
    throw invalid_request("'tool_choice' asks for a tool call but 'tools' is empty", "tool_choice", "invalid_value");
}

}  // namespace

ToolSetup parse_tools(const json& body, std::string_view raw) {
  ToolSetup s;
  std::set<std::string> names;
  if (const json* tools = get_field(body, "tools")) {
    if (!tools->is_array()) throw invalid_request("'tools' must be an array", "tools", "invalid_type");
    if (tools->size() > 128) throw invalid_request("'tools' holds more than 128 functions", "tools", "out_of_range");
    if (!tools->empty()) s.tools = ordered_field(raw, "tools");
    for (size_t i = 0; i < s.tools.size(); ++i) check_tool(s.tools[i], i, names);
  }
  parse_choice(body, s, names);
  if (const auto parallel = get_bool(body, "parallel_tool_calls")) s.parallel = *parallel;
  return s;
}

// The calls' grammar: the format's frame around each callable tool's
// arguments (every tool's under `none`, which only validates the schemas).
std::string calls_gbnf(const ToolSetup& setup, chat::ToolCallFormat format) {
  std::string rules;
  std::vector<std::pair<std::string, std::string>> callable;
  for (size_t i = 0; i < setup.tools.size(); ++i) {
    const auto& f = setup.tools[i]["function"];
    const std::string name = f["name"].get<std::string>();
    if (setup.mode == ToolMode::Named && name != setup.named) continue;
    rules += args_gbnf(f, i) + "\n";
    callable.emplace_back(name, args_rule(i));
  }
  return chat::tool_calls_gbnf(format, callable, setup.parallel) + "\n" + rules;
}

OutputGrammar tool_grammar(const ToolSetup& setup, chat::ToolCallFormat format, GrammarCache& cache) {
  if (setup.tools.is_null()) return {};
  const char* mode = setup.mode == ToolMode::Named ? "named" : setup.mode == ToolMode::None ? "none" : "calls";
  const std::string key = std::string("tools:") + std::to_string(int(format)) + ":" + mode + ":" + setup.named + ":" +
                          (setup.parallel ? "parallel:" : "single:") + setup.tools.dump();
  // Compiled (once per tool set) under every mode: a schema the grammar cannot follow is a 400 now.
  auto compiled = compile_grammar(cache, key, [&] { return calls_gbnf(setup, format); }, "tools");
  const auto triggers = chat::tool_syntax(format).triggers;
  // A format without an opening text to wait for leaves `auto` unconstrained (calls are still parsed).
  if (!setup.calls() || (setup.mode == ToolMode::Auto && triggers.empty())) return {};
  OutputGrammar out{std::move(compiled), {}, key + (setup.mode == ToolMode::Auto ? ":auto" : ""), false};
  if (setup.mode == ToolMode::Auto) out.triggers = triggers;
  return out;
}

std::optional<chat::OutputParser::Options> output_parsing(const Tokenizer& tok, const std::vector<int32_t>& prompt,
                                                          const ToolSetup& setup, chat::ToolCallFormat format) {
  const bool reasoning = chat::template_has_reasoning(tok.vocab().chat_template);
  if (!reasoning && !setup.calls()) return std::nullopt;
  chat::OutputParser::Options o;
  o.format = format;
  o.tools = setup.calls();
  o.reasoning = reasoning;
  if (reasoning) {  // the prompt's last few tokens hold the generation prompt's end
    const size_t tail = std::min<size_t>(prompt.size(), 8);
    o.starts_in_reasoning =
        chat::prompt_opens_reasoning(tok.decode(std::vector<int32_t>(prompt.end() - ptrdiff_t(tail), prompt.end()), true));
  }
  return o;
}

}  // namespace parley::serve
