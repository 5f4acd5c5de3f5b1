#pragma once
// Chat prompts: a conversation rendered in the format of the model's chat
// template. The Jinja template (tokenizer.chat_template) is not interpreted:
// its family is recognised by distinctive substrings and written out here.
// The result starts without BOS and is meant to be encoded with
// add_special=true (which adds BOS) and parse_special=true.
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace parley {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

enum class ChatFamily {
  Plain,    // no (known) template: "User: ...\nAssistant:"
  ChatMl,   // <|im_start|>role\n...<|im_end|>
  Llama3,   // <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
  Llama2,   // [INST] <<SYS>>\n...\n<</SYS>>\n\n... [/INST] ... </s>
  Mistral,  // [INST] ... [/INST]...</s>
  Zephyr,   // <|role|>\n...</s>\n
  Phi3,     // <|role|>\n...<|end|>\n
  Gemma,    // <start_of_turn>user|model\n...<end_of_turn>\n
};

ChatFamily detect_chat_family(std::string_view chat_template);

// `bos`/`eos`: the texts of the vocabulary's BOS/EOS tokens, which some
// formats put between turns.
std::string render_chat(ChatFamily family, const std::vector<ChatMessage>& msgs, bool add_generation_prompt,
                        std::string_view bos = "<s>", std::string_view eos = "</s>");

// The family of vocab.chat_template, with the vocabulary's BOS/EOS texts.
std::string render_chat(const Vocab& vocab, const std::vector<ChatMessage>& msgs, bool add_generation_prompt);

}  // namespace parley
