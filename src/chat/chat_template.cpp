#include "chat/chat_template.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "chat/jinja.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace parley::chat {
namespace {

using Messages = std::vector<ChatMessage>;
using jinja::Text;

constexpr std::string_view kSystemProbe = "PARLEY-SYSTEM-PROBE";

// Everything from the request is message text, roles included.
jinja::Value message_list(const Messages& msgs) {
  jinja::List out;
  for (const ChatMessage& m : msgs) {
    auto d = std::make_shared<jinja::Dict>();
    d->set("role", jinja::Value::string(Text(m.role, true)));
    d->set("content", jinja::Value::string(Text(m.content, true)));
    out.push_back(jinja::Value::dict(std::move(d)));
  }
  return jinja::Value::list(std::move(out));
}

// The variables transformers passes to a chat template.
Text render(const jinja::Template& t, jinja::Value messages, jinja::Value tools, bool add_generation_prompt,
            std::string_view bos, std::string_view eos) {
  jinja::Dict vars;
  vars.set("messages", std::move(messages));
  vars.set("add_generation_prompt", jinja::Value::boolean(add_generation_prompt));
  vars.set("bos_token", jinja::Value::string(std::string(bos)));
  vars.set("eos_token", jinja::Value::string(std::string(eos)));
  vars.set("tools", std::move(tools));
  vars.set("documents", jinja::Value::none());
  return t.render(vars);
}

Text render(const jinja::Template& t, const Messages& msgs, bool add_generation_prompt, std::string_view bos,
            std::string_view eos) {
  return render(t, message_list(msgs), jinja::Value::none(), add_generation_prompt, bos, eos);
}

// A JSON value as the template sees it; strings are message text.
jinja::Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return jinja::Value::none();
    case nlohmann::ordered_json::value_t::boolean: return jinja::Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned: return jinja::Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_float: return jinja::Value::number(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return jinja::Value::string(Text(j.get<std::string>(), true));
    case nlohmann::ordered_json::value_t::array: {
      jinja::List items;
      for (const auto& e : j) items.push_back(from_json(e));
      return jinja::Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      auto d = std::make_shared<jinja::Dict>();
      for (const auto& [k, v] : j.items()) d->set(k, from_json(v));
      return jinja::Value::dict(std::move(d));
    }
    default: throw Error("chat template input: a JSON value of an unsupported kind");
  }
}

// A parsed template, and whether it renders a system message: some raise on
// one (Gemma, Mistral v0.1), some silently drop it (the first Phi-3).
struct Compiled {
  explicit Compiled(std::string_view source) : tmpl(source) {
    try {
      takes_system = render(tmpl, {{"system", std::string(kSystemProbe)}, {"user", "Hi"}}, false, "", "")
                         .str()
                         .find(kSystemProbe) != std::string::npos;
    } catch (const Error&) {
      takes_system = false;
    }
  }
  jinja::Template tmpl;
  bool takes_system = false;
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

// System messages open the next user message, separated by a blank line.
Messages fold_system_into_user(const Messages& msgs) {
  Messages out;
  std::string system;
  for (const ChatMessage& m : msgs) {
    if (m.role == "system") {
      system += (system.empty() ? "" : "\n\n") + m.content;
    } else if (m.role == "user" && !system.empty()) {
      out.push_back({m.role, system + "\n\n" + m.content});
      system.clear();
    } else {
      out.push_back(m);
    }
  }
  if (!system.empty()) out.push_back({"user", system});
  return out;
}

Text render_plain(const Messages& msgs, bool add_generation_prompt) {
  Text out;
  for (const ChatMessage& m : msgs) {
    std::string role = m.role;
    if (!role.empty() && role[0] >= 'a' && role[0] <= 'z') role[0] = char(role[0] - 'a' + 'A');
    out.append(Text(role, true));
    out.append(": ");
    out.append(Text(m.content, true));
    out.append("\n");
  }
  if (add_generation_prompt) out.append("Assistant:");
  return out;
}

std::string token_text(const Vocab& v, int32_t id) { return id >= 0 && id < v.size() ? v.tokens[id] : ""; }

Text render_prompt(const Vocab& vocab, const Messages& msgs, bool add_generation_prompt) {
  if (vocab.chat_template.empty()) return render_plain(msgs, add_generation_prompt);
  const auto compiled = compile(vocab.chat_template);
  const bool has_system =
      std::any_of(msgs.begin(), msgs.end(), [](const ChatMessage& m) { return m.role == "system"; });
  const std::string bos = token_text(vocab, vocab.bos);
  Text out = render(compiled->tmpl, has_system && !compiled->takes_system ? fold_system_into_user(msgs) : msgs,
                    add_generation_prompt, bos, token_text(vocab, vocab.eos));
  // The tokenizer adds BOS itself; the template's own would make two.
  const bool template_bos =
      !bos.empty() && out.str().starts_with(bos) && (!out.has_user_bytes() || out.user_ranges()[0].begin >= bos.size());
  return vocab.add_bos && template_bos ? out.substr(bos.size()) : out;
}

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

std::string render_chat(const Vocab& vocab, const Messages& msgs, bool add_generation_prompt) {
  return render_prompt(vocab, msgs, add_generation_prompt).str();
}

std::vector<ChatSegment> render_chat_segments(const Vocab& vocab, const Messages& msgs, bool add_generation_prompt) {
  const Text prompt = render_prompt(vocab, msgs, add_generation_prompt);
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
std::vector<int32_t> encode_chat(const Tokenizer& tok, const Messages& msgs, bool add_generation_prompt) {
  const Vocab& v = tok.vocab();
  const Text prompt = render_prompt(v, msgs, add_generation_prompt);
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

std::string apply_chat_template(std::string_view chat_template, const Messages& msgs, bool add_generation_prompt,
                                std::string_view bos_token, std::string_view eos_token) {
  return render(jinja::Template(chat_template), msgs, add_generation_prompt, bos_token, eos_token).str();
}

std::string apply_chat_template(std::string_view chat_template, const nlohmann::ordered_json& messages,
                                const nlohmann::ordered_json& tools, bool add_generation_prompt, std::string_view bos_token,
                                std::string_view eos_token) {
  if (!messages.is_array()) throw Error("messages must be a JSON array");
  if (!tools.is_null() && !tools.is_array()) throw Error("tools must be a JSON array");
  return render(jinja::Template(chat_template), from_json(messages), from_json(tools), add_generation_prompt,
                bos_token, eos_token)
      .str();
}

}  // namespace parley::chat
