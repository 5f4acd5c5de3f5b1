#include "chat/jinja_lexer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>

namespace parley::chat::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xc0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += char(0xe0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  } else {
    out += char(0xf0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3f));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      std::string_view text = src_.substr(pos_, tag - pos_);
      if (tag == std::string_view::npos) {
        emit_text(text, pos_);
        break;
      }
      const char kind = src_[tag + 1];  // '{', '%' or '#'
      const char mark = tag + 2 < src_.size() && (src_[tag + 2] == '-' || src_[tag + 2] == '+') ? src_[tag + 2] : 0;
      emit_text(strip_before_tag(text, kind, mark), pos_);
      pos_ = tag + 2 + (mark ? 1 : 0);
      if (kind == '#') {
        skip_comment(tag);
      } else {
        lex_tag(kind, tag);
      }
    }
    out_.push_back({Token::Kind::End, "", src_.size()});
    return std::move(out_);
  }

 private:
  size_t find_tag(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string_view::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string_view::npos;
  }

  // "{%-" removes all whitespace before the tag; lstrip_blocks removes the
  // spaces and tabs between a line start and a block or comment tag.
  std::string_view strip_before_tag(std::string_view text, char kind, char mark) const {
    if (mark == '-') {
      size_t end = text.size();
      while (end > 0 && is_space(text[end - 1])) --end;
      return text.substr(0, end);
    }
    if (mark == '+' || kind == '{') return text;
    const size_t line = text.rfind('\n') + 1;  // 0 when there is no newline
    if (line == 0 && !line_starting_) return text;
    if (line == text.size()) return text;
    for (size_t i = line; i < text.size(); ++i) {
      if (!is_space(text[i])) return text;
    }
    return text.substr(0, line);
  }

  void emit_text(std::string_view text, size_t pos) {
    if (!text.empty()) out_.push_back({Token::Kind::Text, std::string(text), pos});
  }

  // After a tag: "-%}" removes all following whitespace, trim_blocks one newline.
  void strip_after_tag(char mark, bool block) {
    const size_t start = pos_;
    if (mark == '-') {
      while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
    } else if (block && mark != '+' && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
    }
    line_starting_ = pos_ > start && src_[pos_ - 1] == '\n';
  }

  void skip_comment(size_t tag) {
    const size_t end = src_.find("#}", pos_);
    if (end == std::string_view::npos) throw SyntaxError{tag, "missing end of comment tag"};
    const char mark = end > pos_ && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : 0;
    pos_ = end + 2;
    strip_after_tag(mark, true);
  }

  void lex_tag(char kind, size_t tag) {
    const bool block = kind == '%';
    out_.push_back({block ? Token::Kind::BlockBegin : Token::Kind::VarBegin, "", tag});
    const std::string_view close = block ? "%}" : "}}";
    std::vector<char> open_brackets;
    while (true) {
      while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
      if (pos_ >= src_.size()) {
        throw SyntaxError{tag, "unexpected end of template, expected '" + std::string(close) + "'"};
      }
      if (open_brackets.empty()) {
        const char mark = src_[pos_] == '-' || (block && src_[pos_] == '+') ? src_[pos_] : 0;
        if (src_.substr(pos_ + (mark ? 1 : 0)).starts_with(close)) {
          out_.push_back({block ? Token::Kind::BlockEnd : Token::Kind::VarEnd, "", pos_});
          pos_ += close.size() + (mark ? 1 : 0);
          strip_after_tag(mark, block);
          return;
        }
      }
      lex_token(open_brackets);
    }
  }

  void lex_token(std::vector<char>& open_brackets) {
    const size_t start = pos_;
    const char c = src_[pos_];
    if (is_name_start(c)) {
      while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
      out_.push_back({Token::Kind::Name, std::string(src_.substr(start, pos_ - start)), start});
    } else if (is_digit(c)) {
      lex_number();
    } else if (c == '\'' || c == '"') {
      lex_string();
    } else {
      lex_operator(open_brackets);
    }
  }

  void skip_digits() {
    while (pos_ < src_.size() && (is_digit(src_[pos_]) || (src_[pos_] == '_' && is_digit(src_[pos_ - 1])))) ++pos_;
  }

  void lex_number() {
    const size_t start = pos_;
    skip_digits();
    bool is_float = false;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
      ++pos_;
      skip_digits();
      is_float = true;
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && is_digit(src_[p])) {
        pos_ = p;
        skip_digits();
        is_float = true;
      }
    }
    std::string digits;
    for (char ch : src_.substr(start, pos_ - start)) {
      if (ch != '_') digits += ch;
    }
    Token t{is_float ? Token::Kind::Float : Token::Kind::Int, digits, start};
    if (is_float) {
      t.float_value = std::strtod(digits.c_str(), nullptr);
    } else if (std::from_chars(digits.data(), digits.data() + digits.size(), t.int_value).ec != std::errc()) {
      throw SyntaxError{start, "integer literal too large: " + digits};
    }
    out_.push_back(std::move(t));
  }

  // Python's escapes, as Jinja decodes string literals.
  void lex_string() {
    const size_t start = pos_;
    const char quote = src_[pos_++];
    std::string value;
    while (true) {
      if (pos_ >= src_.size()) throw SyntaxError{start, "unterminated string literal"};
      const char c = src_[pos_++];
      if (c == quote) break;
      if (c != '\\' || pos_ >= src_.size()) {
        value += c;
        continue;
      }
      unescape(start, value);
    }
    out_.push_back({Token::Kind::String, std::move(value), start});
  }

  void unescape(size_t start, std::string& value) {
    const char e = src_[pos_++];
    switch (e) {
      case '\n':
        return;  // a line continuation
      case '\\':
      case '\'':
      case '"':
        value += e;
        return;
      case 'n':
        value += '\n';
        return;
      case 't':
        value += '\t';
        return;
      case 'r':
        value += '\r';
        return;
      case 'a':
        value += '\a';
        return;
      case 'b':
        value += '\b';
        return;
      case 'f':
        value += '\f';
        return;
      case 'v':
        value += '\v';
        return;
      case 'x':
        append_utf8(hex_escape(start, 2), value);
        return;
      case 'u':
        append_utf8(hex_escape(start, 4), value);
        return;
      case 'U':
        append_utf8(hex_escape(start, 8), value);
        return;
      default:
        break;
    }
    if (e >= '0' && e <= '7') {  // up to three octal digits
      unsigned v = unsigned(e - '0');
      for (int k = 0; k < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7'; ++k) {
        v = v * 8 + unsigned(src_[pos_++] - '0');
      }
      append_utf8(v, value);
      return;
    }
    value += '\\';  // Python keeps unknown escapes as they are
    value += e;
  }

  char32_t hex_escape(size_t start, size_t digits) {
    unsigned long v = 0;
    const char* first = src_.data() + pos_;
    const auto [end, ec] = std::from_chars(first, first + std::min(digits, src_.size() - pos_), v, 16);
    if (ec != std::errc() || size_t(end - first) != digits || v > 0x10ffff) {
      throw SyntaxError{start, "invalid \\x, \\u or \\U escape in string literal"};
    }
    pos_ += digits;
    return char32_t(v);
  }

  void lex_operator(std::vector<char>& open_brackets) {
    static constexpr std::array<std::string_view, 6> kTwoChar = {"//", "**", "==", "!=", "<=", ">="};
    const size_t start = pos_;
    for (std::string_view op : kTwoChar) {
      if (src_.substr(pos_).starts_with(op)) {
        pos_ += 2;
        out_.push_back({Token::Kind::Op, std::string(op), start});
        return;
      }
    }
    const char c = src_[pos_];
    if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) == std::string_view::npos) {
      throw SyntaxError{start, std::string("unexpected character '") + c + "'"};
    }
    if (c == '(' || c == '[' || c == '{') open_brackets.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    if (c == ')' || c == ']' || c == '}') {
      if (open_brackets.empty() || open_brackets.back() != c)
        throw SyntaxError{start, std::string("unexpected '") + c + "'"};
      open_brackets.pop_back();
    }
    ++pos_;
    out_.push_back({Token::Kind::Op, std::string(1, c), start});
  }

  std::string_view src_;
  size_t pos_ = 0;
  bool line_starting_ = true;  // the last tag ended a line (lstrip_blocks)
  std::vector<Token> out_;
};

}  // namespace

std::string normalize_newlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace parley::chat::jinja
