#pragma once
// Tool calls read from a model's output: whole, and as streamed pieces.
#include <string>

namespace parley::chat {

struct ParsedToolCall {
  std::string id, name;
  std::string arguments;  // the JSON text of the arguments object, exactly as the model wrote it
  bool operator==(const ParsedToolCall&) const = default;
};

// A piece of a call as it is generated. The first piece of a call carries its
// id and name; the arguments fragments of a call concatenate to its arguments.
struct ToolCallDelta {
  int index = 0;  // the call's position in OutputParser::calls()
  std::string id, name, arguments;
};

}  // namespace parley::chat
