#pragma once
// Follows one JSON value byte by byte: where it ends (its brackets balance)
// and the first byte that cannot belong to it. Numbers and literals are only
// checked for their characters; the caller validates the whole value at its end.
#include <string>

namespace parley::chat {

class JsonTracker {
 public:
  enum class Step { Inside, Complete, Invalid };
  Step push(char c);  // the value's next byte; its first must be '{' or '['

 private:
  Step push_outside_string(char c);

  std::string open_;  // the brackets not yet closed
  bool in_string_ = false, escaped_ = false;
};

}  // namespace parley::chat
