#include "chat/reasoning.h"

namespace parley::chat {

bool template_has_reasoning(std::string_view chat_template, const ReasoningMarkers& markers) {
  return chat_template.find(markers.open) != std::string_view::npos;
}

bool prompt_opens_reasoning(std::string_view prompt, const ReasoningMarkers& markers) {
  const size_t end = prompt.find_last_not_of(" \t\r\n");
  return end != std::string_view::npos && prompt.substr(0, end + 1).ends_with(markers.open);
}

}  // namespace parley::chat
