#include "chat/chat_template.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "chat/jinja.h"
#include "chat/tool_messages.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace parley::chat {
namespace {

using Messages = std::vector<ChatMessage>;
using ojson = nlohmann::ordered_json;
using jinja::Text;

constexpr std::string_view kSystemProbe = "PARLEY-SYSTEM-PROBE";

// A JSON value as the template sees it; strings are message text.
jinja::Value from_json(const ojson& j) {
  switch (j.type()) {
    case ojson::value_t::null: return jinja::Value::none();
    case ojson::value_t::boolean: return jinja::Value::boolean(j.get<bool>());
    case ojson::value_t::number_integer:
    case ojson::value_t::number_unsigned: return jinja::Value::integer(j.get<int64_t>());
    case ojson::value_t::number_float: return jinja::Value::number(j.get<double>());
    case ojson::value_t::string: return jinja::Value::string(Text(j.get<std::string>(), true));
    case ojson::value_t::array: {
      jinja::List items;
      for (const auto& e : j) items.push_back(from_json(e));
      return jinja::Value::list(std::move(items));
    }
    case ojson::value_t::object: {
      auto d = std::make_shared<jinja::Dict>();
      for (const auto& [k, v] : j.items()) d->set(k, from_json(v));
      return jinja::Value::dict(std::move(d));
    }
    default: throw Error("chat template input: a JSON value of an unsupported kind");
  }
}

// The variables transformers passes to a chat template; `kwargs` add more.
Text render(const jinja::Template& t, const ojson& messages, const ojson& tools, const ojson& kwargs,
            bool add_generation_prompt, std::string_view bos, std::string_view eos) {
  jinja::Dict vars;
  if (kwargs.is_object())
    for (const auto& [k, v] : kwargs.items()) vars.set(k, from_json(v));
  vars.set("messages", from_json(messages));
  vars.set("add_generation_prompt", jinja::Value::boolean(add_generation_prompt));
  vars.set("bos_token", jinja::Value::string(std::string(bos)));
  vars.set("eos_token", jinja::Value::string(std::string(eos)));
  vars.set("tools", from_json(tools));
  vars.set("documents", jinja::Value::none());
  return t.render(vars);
}

ojson message_json(const Messages& msgs) {
  ojson out = ojson::array();
  for (const ChatMessage& m : msgs) out.push_back({{"role", m.role}, {"content", m.content}});
  return out;
}

// A parsed template, whether it renders a system message (some raise on one:
// Gemma, Mistral v0.1; some silently drop it: the first Phi-3), and whether it
// takes tools.
struct Compiled {
  explicit Compiled(std::string_view source) : tmpl(source), takes_tools(template_takes_tools(source)) {
    const ojson probe = message_json({{"system", std::string(kSystemProbe)}, {"user", "Hi"}});
    try {
      takes_system = render(tmpl, probe, nullptr, nullptr, false, "", "").str().find(kSystemProbe) != std::string::npos;
    } catch (const Error&) {
      takes_system = false;
    }
  }
  jinja::Template tmpl;
  bool takes_system = false;
  bool takes_tools = false;
};

// Parsed templates by source text; a server renders the same one per request.
std::shared_ptr<const Compiled> compile(const std::string& source) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const Compiled>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(source); it != cache.end()) return it->second;
  }
  auto compiled = std::make_shared<const Compiled>(source);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 16) cache.clear();  // a bound, not an LRU: few models per process
  cache.emplace(source, compiled);
  return compiled;
}

std::string_view role_of(const ojson& m) {
  const auto it = m.find("role");
  return it != m.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>()) : "";
}

std::string content_of(const ojson& m) {
  const auto it = m.find("content");
  return it != m.end() && it->is_string() ? it->get<std::string>() : "";
}

// System messages open the next user message, separated by a blank line.
ojson fold_system_into_user(const ojson& msgs) {
  ojson out = ojson::array();
  std::string system;
  for (const ojson& m : msgs) {
    if (role_of(m) == "system") {
      system += (system.empty() ? "" : "\n\n") + content_of(m);
    } else if (role_of(m) == "user" && !system.empty()) {
      ojson joined = m;
      joined["content"] = system + "\n\n" + content_of(m);
      out.push_back(std::move(joined));
      system.clear();
    } else {
      out.push_back(m);
    }
  }
  if (!system.empty()) out.push_back({{"role", "user"}, {"content", system}});
  return out;
}

Text render_plain(const ojson& msgs, bool add_generation_prompt) {
  Text out;
  for (const ojson& m : msgs) {
    std::string role(role_of(m));
    if (!role.empty() && role[0] >= 'a' && role[0] <= 'z') role[0] = char(role[0] - 'a' + 'A');
    out.append(Text(role, true));
    out.append(": ");
    out.append(Text(content_of(m), true));
    out.append("\n");
  }
  if (add_generation_prompt) out.append("Assistant:");
  return out;
}

std::string token_text(const Vocab& v, int32_t id) { return id >= 0 && id < v.size() ? v.tokens[id] : ""; }

void check_input(const ChatInput& in) {
  if (!in.messages.is_array()) throw Error("messages must be a JSON array");
  for (const ojson& m : in.messages)
    if (!m.is_object()) throw Error("each message must be a JSON object");
  if (!in.tools.is_null() && !in.tools.is_array()) throw Error("tools must be a JSON array");
  if (!in.kwargs.is_null() && !in.kwargs.is_object()) throw Error("chat template kwargs must be a JSON object");
  for (const char* name : {"messages", "tools", "documents", "add_generation_prompt", "bos_token", "eos_token"})
    if (in.kwargs.is_object() && in.kwargs.contains(name))
      throw Error(std::string("chat template kwargs cannot set '") + name + "'");
}

Text render_prompt(const Vocab& vocab, const ChatInput& in, bool add_generation_prompt) {
  check_input(in);
  const auto compiled = vocab.chat_template.empty() ? nullptr : compile(vocab.chat_template);
  const bool takes_tools = compiled && compiled->takes_tools;
  ojson msgs = takes_tools ? with_parsed_arguments(in.messages) : with_generic_tools(in.messages, in.tools);
  if (!compiled) return render_plain(msgs, add_generation_prompt);
  const bool has_system = std::any_of(msgs.begin(), msgs.end(), [](const ojson& m) { return role_of(m) == "system"; });
  if (has_system && !compiled->takes_system) msgs = fold_system_into_user(msgs);
  const std::string bos = token_text(vocab, vocab.bos);
  Text out = render(compiled->tmpl, msgs, in.tools, in.kwargs, add_generation_prompt, bos, token_text(vocab, vocab.eos));
  // The tokenizer adds BOS itself; the template's own would make two.
  const bool template_bos =
      !bos.empty() && out.str().starts_with(bos) && (!out.has_user_bytes() || out.user_ranges()[0].begin >= bos.size());
  return vocab.add_bos && template_bos ? out.substr(bos.size()) : out;
}

ChatInput chat_input(const Messages& msgs) {
  ChatInput in;
  in.messages = message_json(msgs);
  return in;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

ChatFamily detect_chat_family(std::string_view t) {
  const auto has = [t](std::string_view s) { return t.find(s) != std::string_view::npos; };
  if (has("<|im_start|>")) return ChatFamily::ChatMl;
  if (has("<|start_header_id|>")) return ChatFamily::Llama3;
  if (has("<start_of_turn>")) return ChatFamily::Gemma;
  if (has("<|user|>")) return has("<|end|>") ? ChatFamily::Phi3 : ChatFamily::Zephyr;
  if (has("[INST]")) return has("<<SYS>>") ? ChatFamily::Llama2 : ChatFamily::Mistral;
  return ChatFamily::Plain;
}

bool template_takes_tools(std::string_view t) {
  for (size_t at = t.find("tools"); at != std::string_view::npos; at = t.find("tools", at + 1)) {
    const bool starts = at == 0 || !is_identifier_char(t[at - 1]);
    const bool ends = at + 5 == t.size() || !is_identifier_char(t[at + 5]);
    if (starts && ends) return true;
  }
  return false;
}

std::string render_chat(const Vocab& vocab, const ChatInput& input, bool add_generation_prompt) {
  return render_prompt(vocab, input, add_generation_prompt).str();
}

std::string render_chat(const Vocab& vocab, const Messages& msgs, bool add_generation_prompt) {
  return render_chat(vocab, chat_input(msgs), add_generation_prompt);
}

std::vector<ChatSegment> render_chat_segments(const Vocab& vocab, const Messages& msgs, bool add_generation_prompt) {
  return render_chat_segments(vocab, chat_input(msgs), add_generation_prompt);
}

std::vector<ChatSegment> render_chat_segments(const Vocab& vocab, const ChatInput& input, bool add_generation_prompt) {
  const Text prompt = render_prompt(vocab, input, add_generation_prompt);
  const std::string& s = prompt.str();
  std::vector<ChatSegment> out;
  size_t pos = 0;
  for (const Text::Range& r : prompt.user_ranges()) {
    if (r.begin > pos) out.push_back({s.substr(pos, r.begin - pos), false});
    out.push_back({s.substr(r.begin, r.end - r.begin), true});
    pos = r.end;
  }
  if (pos < s.size()) out.push_back({s.substr(pos), false});
  return out;
}

// As tok.encode(prompt, true, true) would, but special tokens are looked for
// in the template's text only; message text joins the plain text around it.
std::vector<int32_t> encode_chat(const Tokenizer& tok, const ChatInput& input, bool add_generation_prompt) {
  const Vocab& v = tok.vocab();
  const Text prompt = render_prompt(v, input, add_generation_prompt);
  const std::string_view s = prompt.str();
  const SpecialTokens specials(v);
  std::vector<int32_t> ids;
  if (v.add_bos && v.bos >= 0) ids.push_back(v.bos);
  size_t plain = 0;  // start of the plain text not yet encoded
  const auto encode_plain_until = [&](size_t end) {
    if (end <= plain) return;
    const std::vector<int32_t> part = tok.encode(s.substr(plain, end - plain), false, false);
    ids.insert(ids.end(), part.begin(), part.end());
  };
  std::vector<Text::Range> user = prompt.user_ranges();
  user.push_back({s.size(), s.size()});
  size_t pos = 0;
  for (const Text::Range& r : user) {
    for (const SpecialTokens::Fragment& f : specials.split(s.substr(pos, r.begin - pos))) {
      if (f.id < 0) continue;
      const size_t at = size_t(f.text.data() - s.data());
      encode_plain_until(at);
      ids.push_back(f.id);
      plain = at + f.text.size();
    }
    pos = r.end;
  }
  encode_plain_until(s.size());
  if (v.add_eos && v.eos >= 0) ids.push_back(v.eos);
  return ids;
}

std::vector<int32_t> encode_chat(const Tokenizer& tok, const Messages& msgs, bool add_generation_prompt) {
  return encode_chat(tok, chat_input(msgs), add_generation_prompt);
}

std::string apply_chat_template(std::string_view chat_template, const Messages& msgs, bool add_generation_prompt,
                                std::string_view bos_token, std::string_view eos_token) {
  return render(jinja::Template(chat_template), message_json(msgs), nullptr, nullptr, add_generation_prompt, bos_token,
                eos_token)
      .str();
}

std::string apply_chat_template(std::string_view chat_template, const nlohmann::ordered_json& messages,
                                const nlohmann::ordered_json& tools, bool add_generation_prompt, std::string_view bos_token,
                                std::string_view eos_token) {
  if (!messages.is_array()) throw Error("messages must be a JSON array");
  if (!tools.is_null() && !tools.is_array()) throw Error("tools must be a JSON array");
  return render(jinja::Template(chat_template), messages, tools, nullptr, add_generation_prompt, bos_token, eos_token)
      .str();
}

}  // namespace parley::chat
