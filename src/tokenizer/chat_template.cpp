#include "tokenizer/chat_template.h"

namespace parley {
namespace {

using Messages = std::vector<ChatMessage>;

std::string trim(std::string_view s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(ws) + 1 - b));
}

// Formats without a system role: the system text opens the first user turn.
Messages fold_system_into_first_user(const Messages& msgs) {
  Messages out;
  std::string system;
  for (const ChatMessage& m : msgs) {
    if (m.role == "system") {
      system += m.content + "\n\n";
    } else if (m.role == "user" && !system.empty()) {
      out.push_back({m.role, system + m.content});
      system.clear();
    } else {
      out.push_back(m);
    }
  }
  return out;
}

// <tag open><role><tag close> content <end> per message, as ChatML, Llama 3,
// Phi-3 and Zephyr do; then the assistant header when a reply is wanted.
struct HeaderFormat {
  std::string_view open, close;
  std::string end;
  bool trim_content;
};

std::string render_headers(const HeaderFormat& f, const Messages& msgs, bool add_generation_prompt) {
  std::string out;
  for (const ChatMessage& m : msgs) {
    out.append(f.open).append(m.role).append(f.close);
    out.append(f.trim_content ? trim(m.content) : m.content).append(f.end);
  }
  if (add_generation_prompt) out.append(f.open).append("assistant").append(f.close);
  return out;
}

std::string render_gemma(const Messages& msgs, bool add_generation_prompt) {
  std::string out;
  for (const ChatMessage& m : fold_system_into_first_user(msgs)) {
    const std::string_view role = m.role == "assistant" ? "model" : "user";
    out.append("<start_of_turn>").append(role).append("\n").append(trim(m.content)).append("<end_of_turn>\n");
  }
  if (add_generation_prompt) out += "<start_of_turn>model\n";
  return out;
}

// Llama 2: BOS [INST] (<<SYS>> block) user [/INST] assistant EOS, per turn.
// The first BOS is left to the tokenizer.
std::string render_llama2(const Messages& msgs, std::string_view bos, std::string_view eos) {
  std::string out, system;
  bool first_turn = true;
  for (const ChatMessage& m : msgs) {
    if (m.role == "system") {
      system = "<<SYS>>\n" + m.content + "\n<</SYS>>\n\n";
    } else if (m.role == "assistant") {
      out.append(" ").append(trim(m.content)).append(" ").append(eos);
    } else {
      if (!first_turn) out.append(bos);
      out.append("[INST] ").append(trim(system + m.content)).append(" [/INST]");
      system.clear();
      first_turn = false;
    }
  }
  return out;
}

// Mistral: [INST] user [/INST]assistant EOS, with no spaces around replies.
std::string render_mistral(const Messages& msgs, std::string_view eos) {
  std::string out;
  for (const ChatMessage& m : fold_system_into_first_user(msgs)) {
    if (m.role == "assistant") {
      out.append(m.content).append(eos);
    } else {
      out.append("[INST] ").append(m.content).append(" [/INST]");
    }
  }
  return out;
}

std::string render_plain(const Messages& msgs, bool add_generation_prompt) {
  std::string out;
  for (const ChatMessage& m : msgs) {
    std::string role = m.role;
    if (!role.empty() && role[0] >= 'a' && role[0] <= 'z') role[0] = char(role[0] - 'a' + 'A');
    out.append(role).append(": ").append(m.content).append("\n");
  }
  if (add_generation_prompt) out += "Assistant:";
  return out;
}

std::string_view token_text(const Vocab& v, int32_t id, std::string_view dflt) {
  return id >= 0 && id < v.size() ? std::string_view(v.tokens[id]) : dflt;
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

std::string render_chat(ChatFamily family, const Messages& msgs, bool add_generation_prompt, std::string_view bos,
                        std::string_view eos) {
  switch (family) {
    case ChatFamily::ChatMl:
      return render_headers({"<|im_start|>", "\n", "<|im_end|>\n", false}, msgs, add_generation_prompt);
    case ChatFamily::Llama3:
      return render_headers({"<|start_header_id|>", "<|end_header_id|>\n\n", "<|eot_id|>", true}, msgs,
                            add_generation_prompt);
    case ChatFamily::Phi3:
      return render_headers({"<|", "|>\n", "<|end|>\n", false}, msgs, add_generation_prompt);
    case ChatFamily::Zephyr:
      return render_headers({"<|", "|>\n", std::string(eos) + "\n", false}, msgs, add_generation_prompt);
    case ChatFamily::Gemma:
      return render_gemma(msgs, add_generation_prompt);
    case ChatFamily::Llama2:  // the prompt ends with [/INST] whether or not a reply is wanted
      return render_llama2(msgs, bos, eos);
    case ChatFamily::Mistral:
      return render_mistral(msgs, eos);
    case ChatFamily::Plain:
      break;
  }
  return render_plain(msgs, add_generation_prompt);
}

std::string render_chat(const Vocab& vocab, const Messages& msgs, bool add_generation_prompt) {
  return render_chat(detect_chat_family(vocab.chat_template), msgs, add_generation_prompt,
                     token_text(vocab, vocab.bos, "<s>"), token_text(vocab, vocab.eos, "</s>"));
}

}  // namespace parley
