#pragma once
// Chat prompts: a conversation rendered by the model's own chat template
// (tokenizer.chat_template, run by the Jinja interpreter in chat/jinja.h)
// or, for vocabularies without one, in a plain "User: ...\nAssistant:" format.
// docs/chat-templates.md describes the behaviour in full.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace parley {
class Tokenizer;
}  // namespace parley

namespace parley::chat {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant" (or what the template knows)
  std::string content;
};

// The well-known format a template looks like, recognised by distinctive
// substrings; Plain for an empty template. Informational only: rendering
// always runs the template itself.
enum class ChatFamily {
  Plain,    // no template: "User: ...\nAssistant:"
  ChatMl,   // <|im_start|>role\n...<|im_end|>
  Llama3,   // <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
  Llama2,   // [INST] <<SYS>>\n...\n<</SYS>>\n\n... [/INST] ... </s>
  Mistral,  // [INST] ... [/INST]...</s>
  Zephyr,   // <|role|>\n...</s>\n
  Phi3,     // <|role|>\n...<|end|>\n
  Gemma,    // <start_of_turn>user|model\n...<end_of_turn>\n
};

ChatFamily detect_chat_family(std::string_view chat_template);

// A conversation as an OpenAI chat request gives it, passed to the template as
// transformers passes it.
struct ChatInput {
  ChatInput() = default;  // not an aggregate: a braced message list stays a std::vector<ChatMessage>
  // [{role, content (a string; null for an assistant message with tool_calls),
  //   tool_calls [{id, type, function {name, arguments}}], tool_call_id, name}];
  // arguments may be JSON text (OpenAI's form): templates get the object.
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;   // [{type: "function", function: {...}}] or null for none
  nlohmann::ordered_json kwargs;  // template variables (chat_template_kwargs), an object or null
};

// True when the template reads the variable `tools`; templates that do not
// get tools described by generic_tool_instructions in the system message.
bool template_takes_tools(std::string_view chat_template);

// The prompt for `msgs`: the template's output as transformers renders it,
// except that (1) system messages a template cannot take (it raises or drops
// them) open the next user message instead, and (2) a leading BOS text is left
// out when the vocabulary adds BOS itself. Encode it with add_special=true and
// parse_special=true, or (better) use encode_chat. Throws parley::Error, with
// line and column, when the template fails or raises.
// With a template that takes no tools, `tools` are described in the system
// message (generic_tool_instructions), assistant tool calls are written in
// the Generic format and tool results become user messages. kwargs cannot
// set messages, tools, documents, add_generation_prompt, bos_token or eos_token.
std::string render_chat(const Vocab& vocab, const ChatInput& input, bool add_generation_prompt);
std::string render_chat(const Vocab& vocab, const std::vector<ChatMessage>& msgs, bool add_generation_prompt);

// The same prompt in pieces: template text, and text that came from messages.
struct ChatSegment {
  std::string text;
  bool from_message;
};
std::vector<ChatSegment> render_chat_segments(const Vocab& vocab, const ChatInput& input, bool add_generation_prompt);
std::vector<ChatSegment> render_chat_segments(const Vocab& vocab, const std::vector<ChatMessage>& msgs,
                                              bool add_generation_prompt);

// The prompt's token ids, BOS/EOS added as the vocabulary says. Special-token
// texts are recognised in the template's text only: message text such as a
// user typing "<|im_start|>" is encoded as plain text.
std::vector<int32_t> encode_chat(const Tokenizer& tok, const ChatInput& input, bool add_generation_prompt);
std::vector<int32_t> encode_chat(const Tokenizer& tok, const std::vector<ChatMessage>& msgs,
                                 bool add_generation_prompt);

// Exactly what transformers' apply_chat_template renders (messages as given,
// tools=None): no system-message folding, no BOS removal.
std::string apply_chat_template(std::string_view chat_template, const std::vector<ChatMessage>& msgs,
                                bool add_generation_prompt, std::string_view bos_token, std::string_view eos_token);
// The same with messages and tools as JSON, every field of them passed to the
// template as it is (tool_calls, name, …); `tools` null renders tools=None.
std::string apply_chat_template(std::string_view chat_template, const nlohmann::ordered_json& messages,
                                const nlohmann::ordered_json& tools, bool add_generation_prompt, std::string_view bos_token,
                                std::string_view eos_token);

}  // namespace parley::chat
