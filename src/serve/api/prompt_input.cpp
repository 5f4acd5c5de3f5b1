#include "serve/api/prompt_input.h"

#include <algorithm>
#include <initializer_list>

#include "serve/transport/api_error.h"
#include "util/error.h"

namespace parley::serve {
namespace {

std::string message_content(const json& content, size_t i) {
  const std::string param = "messages[" + std::to_string(i) + "].content";
  if (content.is_null()) return "";
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw invalid_request("'" + param + "' must be a string or an array of parts", param, "invalid_type");
  std::string text;
  for (const json& part : content) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string())
      throw invalid_request("'" + param + "': only {\"type\": \"text\", \"text\": ...} parts are supported", param,
                            "invalid_type");
    text += part["text"].get<std::string>();
  }
  return text;
}

// The role of message `param`, one of `roles` ("developer", OpenAI's newer
// name for the system role, is read as "system").
std::string message_role(const json& m, const std::string& param, std::initializer_list<std::string_view> roles) {
  if (!m.is_object()) throw invalid_request("'" + param + "' must be an object", param, "invalid_type");
  const json* role = get_field(m, "role");
  if (!role || !role->is_string()) throw invalid_request("'" + param + ".role' must be a string", param + ".role");
  std::string r = role->get<std::string>();
  if (r == "developer") r = "system";
  if (std::find(roles.begin(), roles.end(), r) != roles.end()) return r;
  std::string names = "developer";
  for (std::string_view name : roles) names += ", " + std::string(name);
  throw invalid_request("'" + param + ".role' must be one of " + names + "; got '" + r + "'", param + ".role");
}

chat::ChatMessage parse_message(const json& m, size_t i) {
  const std::string param = "messages[" + std::to_string(i) + "]";
  const std::string r = message_role(m, param, {"system", "user", "assistant"});
  refuse_other_fields(m, {"role", "content"}, param + ".");  // name, tool_calls, refusal, audio…: not for this server
  return {r, message_content(m.contains("content") ? m["content"] : json(nullptr), i)};
}

// An assistant message's calls, `arguments` parsed: templates read them as objects.
nlohmann::ordered_json tool_calls_of(const json& calls, const std::string& param) {
  if (!calls.is_array()) throw invalid_request("'" + param + "' must be an array", param, "invalid_type");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t j = 0; j < calls.size(); ++j) {
    const std::string at = param + "[" + std::to_string(j) + "]";
    const json& c = calls[j];
    if (!c.is_object()) throw invalid_request("'" + at + "' must be an object", at, "invalid_type");
    refuse_other_fields(c, {"id", "type", "function"}, at + ".");
    const json* f = get_field(c, "function");
    const auto name = f && f->is_object() ? get_string(*f, "name") : std::nullopt;
    if (!name) throw invalid_request("'" + at + ".function.name' is required", at + ".function.name", "missing_required_parameter");
    refuse_other_fields(*f, {"name", "arguments"}, at + ".function.");
    const std::string args = get_string(*f, "arguments").value_or("{}");
    nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(args, nullptr, false);
    if (parsed.is_discarded())
      throw invalid_request("'" + at + ".function.arguments' must be a JSON text", at + ".function.arguments", "invalid_value");
    out.push_back({{"id", get_string(c, "id").value_or("")},
                   {"type", "function"},
                   {"function", {{"name", *name}, {"arguments", std::move(parsed)}}}});
  }
  return out;
}

// One message as the chat template receives it (transformers' layout).
nlohmann::ordered_json template_message(const json& m, size_t i) {
  const std::string param = "messages[" + std::to_string(i) + "]";
  const std::string r = message_role(m, param, {"system", "user", "assistant", "tool"});
  std::vector<std::string_view> fields = {"role", "content", "name"};
  if (r == "assistant") fields.push_back("tool_calls");
  if (r == "tool") fields.push_back("tool_call_id");
  refuse_other_fields(m, fields, param + ".");
  nlohmann::ordered_json out = {{"role", r}, {"content", message_content(m.contains("content") ? m["content"] : json(nullptr), i)}};
  if (const auto name = get_string(m, "name")) out["name"] = *name;
  if (const json* calls = get_field(m, "tool_calls")) {
    out["tool_calls"] = tool_calls_of(*calls, param + ".tool_calls");
    if (out["content"] == "" && !out["tool_calls"].empty()) out["content"] = nullptr;
  }
  if (r == "tool") {
    const auto id = get_string(m, "tool_call_id");
    if (!id) throw invalid_request("'" + param + ".tool_call_id' is required", param + ".tool_call_id", "missing_required_parameter");
    out["tool_call_id"] = *id;
  }
  return out;
}

bool is_token_array(const json& a) {
  for (const json& v : a)
    if (!v.is_number_integer()) return false;
  return !a.empty();
}

std::vector<int32_t> token_ids(const json& a, int32_t vocab_size, const std::string& field) {
  std::vector<int32_t> ids;
  for (const json& v : a) {
    const int64_t id = v.get<int64_t>();
    if (id < 0 || id >= vocab_size)
      throw invalid_request("'" + field + "' holds a token id outside the vocabulary", field, "out_of_range");
    ids.push_back(int32_t(id));
  }
  return ids;
}

}  // namespace

std::vector<chat::ChatMessage> parse_messages(const json& body) {
  const json* f = get_field(body, "messages");
  if (!f) throw invalid_request("'messages' is required", "messages", "missing_required_parameter");
  if (!f->is_array() || f->empty()) throw invalid_request("'messages' must be a non-empty array", "messages", "invalid_type");
  std::vector<chat::ChatMessage> out;
  for (size_t i = 0; i < f->size(); ++i) out.push_back(parse_message((*f)[i], i));
  return out;
}

chat::ChatInput parse_chat_input(const json& body, const nlohmann::ordered_json& tools) {
  const json* f = get_field(body, "messages");
  if (!f) throw invalid_request("'messages' is required", "messages", "missing_required_parameter");
  if (!f->is_array() || f->empty()) throw invalid_request("'messages' must be a non-empty array", "messages", "invalid_type");
  chat::ChatInput in;
  in.messages = nlohmann::ordered_json::array();
  for (size_t i = 0; i < f->size(); ++i) in.messages.push_back(template_message((*f)[i], i));
  in.tools = tools;
  if (const json* kwargs = get_field(body, "chat_template_kwargs")) {
    if (!kwargs->is_object())
      throw invalid_request("'chat_template_kwargs' must be an object", "chat_template_kwargs", "invalid_type");
    in.kwargs = nlohmann::ordered_json::parse(kwargs->dump());
  }
  return in;
}

chat::ChatMessage strict_message(const json& m, const std::string& param, const MessageFormat& format) {
  if (!m.is_object()) throw invalid_request("'" + param + "' must be a message object", param, "invalid_type");
  refuse_other_fields(m, format.fields, param + ".");
  const json* role = get_field(m, "role");
  std::string r = role && role->is_string() ? role->get<std::string>() : "";
  if (std::find(format.roles.begin(), format.roles.end(), r) == format.roles.end()) {
    std::string allowed;
    for (std::string_view name : format.roles) allowed += (allowed.empty() ? "'" : ", '") + std::string(name) + "'";
    throw invalid_request("'" + param + ".role' must be one of " + allowed, param + ".role", "invalid_value");
  }
  if (r == "developer") r = "system";
  const json* content = get_field(m, "content");
  if (!content)
    throw invalid_request("'" + param + ".content' is required", param + ".content", "missing_required_parameter");
  return {r, content_text(*content, param + ".content", format.part_types, format.part_fields)};
}

std::string content_text(const json& content, const std::string& param, const std::vector<std::string_view>& types,
                         const std::vector<std::string_view>& keys) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array())
    throw invalid_request("'" + param + "' must be a string or an array of text blocks", param, "invalid_type");
  std::string text;
  for (size_t j = 0; j < content.size(); ++j) {
    const json& part = content[j];
    const std::string at = param + "[" + std::to_string(j) + "]";
    if (!part.is_object()) throw invalid_request("'" + at + "' must be an object", at, "invalid_type");
    const json* type = get_field(part, "type");
    if (!type || !type->is_string() || std::find(types.begin(), types.end(), type->get<std::string>()) == types.end()) {
      std::string allowed;
      for (std::string_view t : types) allowed += (allowed.empty() ? "'" : " or '") + std::string(t) + "'";
      throw invalid_request("'" + at + ".type' must be " + allowed + " (text is all this server takes)" +
                                (type && type->is_string() ? "; got '" + type->get<std::string>() + "'" : ""),
                            at + ".type", "unsupported_content");
    }
    refuse_other_fields(part, keys, at + ".");
    const json* t = get_field(part, "text");
    if (!t || !t->is_string()) throw invalid_request("'" + at + ".text' must be a string", at + ".text", "invalid_type");
    text += t->get<std::string>();
  }
  return text;
}

std::vector<PromptInput> parse_prompts(const json& body, int32_t vocab_size, const std::string& field) {
  const json* f = get_field(body, field.c_str());
  if (!f) throw invalid_request("'" + field + "' is required", field, "missing_required_parameter");
  if (f->is_string()) return {PromptInput{f->get<std::string>(), {}, false}};
  if (f->is_array() && is_token_array(*f)) return {PromptInput{"", token_ids(*f, vocab_size, field), true}};
  if (!f->is_array() || f->empty())
    throw invalid_request("'" + field + "' must be a string, an array of strings, an array of token ids or an array of such arrays",
                          field, "invalid_type");
  std::vector<PromptInput> out;
  for (const json& p : *f) {
    if (p.is_string()) out.push_back({p.get<std::string>(), {}, false});
    else if (p.is_array() && is_token_array(p)) out.push_back({"", token_ids(p, vocab_size, field), true});
    else throw invalid_request("'" + field + "' array entries must all be strings or all arrays of token ids", field, "invalid_type");
    if (out.back().is_tokens != out.front().is_tokens)
      throw invalid_request("'" + field + "' array entries must all be strings or all arrays of token ids", field, "invalid_type");
  }
  return out;
}

std::vector<int32_t> chat_tokens(const Tokenizer& tok, const std::vector<chat::ChatMessage>& messages) {
  try {
    return chat::encode_chat(tok, messages, true);
  } catch (const Error& e) {  // the template raised (e.g. roles must alternate) or failed
    throw invalid_request(std::string("The model's chat template refused the messages: ") + e.what(), "messages",
                          "chat_template_error");
  }
}

std::vector<int32_t> chat_tokens(const Tokenizer& tok, const chat::ChatInput& input) {
  try {
    return chat::encode_chat(tok, input, true);
  } catch (const Error& e) {
    throw invalid_request(std::string("The model's chat template refused the messages: ") + e.what(), "messages",
                          "chat_template_error");
  }
}

std::vector<int32_t> prompt_tokens(const Tokenizer& tok, const PromptInput& prompt) {
  return prompt.is_tokens ? prompt.tokens : tok.encode(prompt.text, true, false);
}

}  // namespace parley::serve
