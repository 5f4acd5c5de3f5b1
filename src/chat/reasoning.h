#pragma once
// Reasoning ("thinking") blocks: the markers around them and whether a
// template or a rendered prompt uses them.
#include <string>
#include <string_view>

namespace parley::chat {

struct ReasoningMarkers {
  std::string open = "<think>", close = "</think>";
};

// The template writes thinking blocks (Qwen3, DeepSeek-R1 and its distills).
bool template_has_reasoning(std::string_view chat_template, const ReasoningMarkers& markers = {});
// The prompt ends inside an open thinking block (the open marker, then only
// whitespace), so the output starts with reasoning: DeepSeek-R1 distills'
// generation prompt "<think>\n".
bool prompt_opens_reasoning(std::string_view rendered_prompt, const ReasoningMarkers& markers = {});

}  // namespace parley::chat
