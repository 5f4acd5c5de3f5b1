#pragma once
// Real chat templates bundled by name, for models whose GGUF lacks one or has
// another: "chatml", "hermes", "llama3.1", "mistral", "qwen3".
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::chat {

std::optional<std::string_view> named_chat_template(std::string_view name);
std::vector<std::string> named_chat_template_names();

}  // namespace parley::chat
