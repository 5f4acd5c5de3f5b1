#include "chat/json_tracker.h"

#include <string_view>

namespace parley::chat {

JsonTracker::Step JsonTracker::push(char c) {
  if (!in_string_) return push_outside_string(c);
  if (escaped_) {
    escaped_ = false;
  } else if (c == '\\') {
    escaped_ = true;
  } else if (c == '"') {
    in_string_ = false;
  } else if (static_cast<unsigned char>(c) < 0x20) {
    return Step::Invalid;  // JSON strings hold no raw control characters
  }
  return Step::Inside;
}

JsonTracker::Step JsonTracker::push_outside_string(char c) {
  static constexpr std::string_view kScalarChars = " \t\r\n:,0123456789+-.eEtrufalsn";
  if (open_.empty() && c != '{' && c != '[') return Step::Invalid;
  switch (c) {
    case '"': in_string_ = true; return Step::Inside;
    case '{':
    case '[': open_ += c; return Step::Inside;
    case '}':
    case ']':
      if (open_.back() != (c == '}' ? '{' : '[')) return Step::Invalid;
      open_.pop_back();
      return open_.empty() ? Step::Complete : Step::Inside;
    default: return kScalarChars.find(c) == std::string_view::npos ? Step::Invalid : Step::Inside;
  }
}

}  // namespace parley::chat
