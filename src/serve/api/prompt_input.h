#pragma once
// Prompts of request bodies: chat messages and completion prompts, validated
// and turned into token ids for the model.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "serve/api/json_fields.h"
#include "tokenizer/tokenizer.h"

namespace parley::serve {

// "messages": roles system/developer/user/assistant; content a string or an
// array of {"type": "text", "text": ...} parts.
std::vector<chat::ChatMessage> parse_messages(const json& body);

// "messages" as the chat template takes them: also tool-role messages
// (tool_call_id), assistant messages with tool_calls (arguments parsed into
// objects), names; `tools` (null: none) and "chat_template_kwargs" passed on.
chat::ChatInput parse_chat_input(const json& body, const nlohmann::ordered_json& tools);

// A message {"role", "content", ...} in the APIs that refuse what they
// cannot honour: any key besides `fields`, a role not in `roles` ("developer"
// is read as "system") or content content_text refuses is a 400 naming it.
struct MessageFormat {
  std::vector<std::string_view> fields;
  std::vector<std::string_view> roles;
  std::vector<std::string_view> part_types;                  // of content parts
  std::vector<std::string_view> part_fields = {"type", "text"};
};
// `param`: where the message is ("messages[2]").
chat::ChatMessage strict_message(const json& m, const std::string& param, const MessageFormat& format);

// The text of a message's content in the APIs that refuse what they cannot
// honour (Anthropic's Messages, OpenAI's Responses): a string, or an array
// of parts {"type": T, "text": ...} with T one of `types` (their texts
// concatenated). Any other part type, or a key of a part other than those
// in `keys`, is a 400 naming it ("messages[0].content[1].type").
std::string content_text(const json& content, const std::string& param, const std::vector<std::string_view>& types,
                         const std::vector<std::string_view>& keys = {"type", "text"});

// One completion prompt: text, or token ids given directly.
struct PromptInput {
  std::string text;
  std::vector<int32_t> tokens;
  bool is_tokens = false;
};
// `field` ("prompt", "input"): a string, an array of strings, an array of
// token ids, or an array of arrays of token ids.
std::vector<PromptInput> parse_prompts(const json& body, int32_t vocab_size, const std::string& field = "prompt");

// The conversation in the model's chat format, ending with the assistant's
// turn; special-token texts inside messages stay plain text. A template that
// refuses the conversation is a 400.
std::vector<int32_t> chat_tokens(const Tokenizer& tok, const std::vector<chat::ChatMessage>& messages);
std::vector<int32_t> chat_tokens(const Tokenizer& tok, const chat::ChatInput& input);
// A completion prompt with BOS (per the vocabulary); special-token texts in it are plain text.
std::vector<int32_t> prompt_tokens(const Tokenizer& tok, const PromptInput& prompt);

}  // namespace parley::serve
