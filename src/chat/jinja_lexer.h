#pragma once
// Splits a Jinja template into text and the tokens inside {{ }} and {% %}
// tags, applying whitespace control the way Hugging Face transformers
// configures Jinja: trim_blocks and lstrip_blocks on, plus "-" / "+" marks.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace parley::chat::jinja {

// A syntax error at a byte offset of the template.
struct SyntaxError {
  size_t pos;
  std::string message;
};

struct Token {
  enum class Kind { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, End };
  Kind kind;
  std::string value;  // the text, name, operator or (unescaped) string
  size_t pos;
  int64_t int_value = 0;
  double float_value = 0;
};

// `source` as Jinja reads it: "\r\n" and "\r" become "\n" and one final
// newline is dropped (keep_trailing_newline=False).
std::string normalize_newlines(std::string_view source);

// Comments are dropped. Throws SyntaxError.
std::vector<Token> tokenize(std::string_view source);

}  // namespace parley::chat::jinja
