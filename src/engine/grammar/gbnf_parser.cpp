#include "engine/grammar/gbnf_parser.h"

#include <map>
#include <tuple>
#include <utility>

#include "engine/grammar/grammar_rules.h"
#include "util/error.h"

namespace parley::grammar {

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class GbnfParser {
 public:
  explicit GbnfParser(std::string_view text) : text_(text) {}

  ParsedGrammar parse() {
    skip_space();
    while (pos_ < text_.size()) {
      parse_rule();
      skip_space();
    }
    return std::move(grammar_);
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const {
    throw Error("GBNF " + where(at) + ": " + what);
  }

  std::string where(size_t at) const {
    const auto [line, column] = line_column(at);
    return std::to_string(line) + ":" + std::to_string(column);
  }

  void locate(size_t at, ParsedRule& rule) const { std::tie(rule.line, rule.column) = line_column(at); }

  // Counts from the last position asked for (they mostly increase), so that
  // locating every rule stays linear in the text.
  std::pair<int32_t, int32_t> line_column(size_t at) const {
    if (at < seen_at_) {
      seen_at_ = 0;
      seen_line_ = 1;
      seen_column_ = 1;
    }
    for (; seen_at_ < at && seen_at_ < text_.size(); ++seen_at_) {
      if (text_[seen_at_] == '\n') {
        ++seen_line_;
        seen_column_ = 1;
      } else {
        ++seen_column_;
      }
    }
    return {seen_line_, seen_column_};
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  // Whitespace, newlines and comments: a rule ends where the next `name ::=`
  // starts, so line breaks may fall anywhere inside one.
  void skip_space() {
    while (!at_end()) {
      const char c = text_[pos_];
      if (c == '#') {
        while (!at_end() && text_[pos_] != '\n') ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else {
        break;
      }
    }
  }

  bool at_rule_start() const {
    size_t p = pos_;
    while (p < text_.size() && is_name_char(text_[p])) ++p;
    if (p == pos_) return false;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    return text_.substr(p, 3) == "::=";
  }

  std::string parse_name() {
    const size_t start = pos_;
    while (!at_end() && is_name_char(text_[pos_])) ++pos_;
    if (pos_ == start) fail(start, "expected a rule name");
    return std::string(text_.substr(start, pos_ - start));
  }

  int32_t rule_id(const std::string& name, size_t at) {
    auto [it, added] = rule_ids_.emplace(name, static_cast<int32_t>(grammar_.rules.size()));
    if (added) {
      add_rule();
      grammar_.rules.back().name = name;
      locate(at, grammar_.rules.back());
    }
    return it->second;
  }

  void add_rule() {
    if (grammar_.rules.size() >= static_cast<size_t>(kMaxRules)) {
      fail(pos_, "too many rules (more than " + std::to_string(kMaxRules) + " after expanding repetitions)");
    }
    grammar_.rules.emplace_back();
  }

  // A rule of the current rule's generated helpers (groups, repetitions).
  int32_t add_generated(std::vector<std::vector<Symbol>> alternatives) {
    for (const auto& alt : alternatives) count_elements(alt.size() + 1);
    add_rule();
    ParsedRule& rule = grammar_.rules.back();
    rule.name = grammar_.rules[current_].name;
    rule.line = grammar_.rules[current_].line;
    rule.column = grammar_.rules[current_].column;
    rule.generated = true;
    rule.defined = true;
    rule.alternatives = std::move(alternatives);
    return static_cast<int32_t>(grammar_.rules.size() - 1);
  }

  void count_elements(size_t n) {
    grammar_.element_count += static_cast<int32_t>(n);
    if (grammar_.element_count > kMaxElements) {
      fail(pos_, "grammar too large (more than " + std::to_string(kMaxElements) + " elements after expanding repetitions)");
    }
  }

  void parse_rule() {
    const size_t start = pos_;
    const std::string name = parse_name();
    skip_space();
    if (text_.substr(pos_, 3) != "::=") fail(pos_, "expected '::=' after rule name '" + name + "'");
    pos_ += 3;
    current_ = rule_id(name, start);
    if (grammar_.rules[current_].defined) fail(start, "rule '" + name + "' is defined twice");
    grammar_.rules[current_].defined = true;
    locate(start, grammar_.rules[current_]);
    auto alternatives = parse_alternatives(0);
    for (const auto& alt : alternatives) count_elements(alt.size() + 1);
    grammar_.rules[current_].alternatives = std::move(alternatives);
    if (!at_end() && !at_rule_start()) fail(pos_, std::string("unexpected '") + peek() + "'");
  }

  std::vector<std::vector<Symbol>> parse_alternatives(int depth) {
    std::vector<std::vector<Symbol>> alternatives;
    alternatives.push_back(parse_sequence(depth));
    while (peek() == '|') {
      ++pos_;
      alternatives.push_back(parse_sequence(depth));
    }
    return alternatives;
  }

  std::vector<Symbol> parse_sequence(int depth) {
    std::vector<Symbol> seq;
    for (;;) {
      skip_space();
      const char c = peek();
      if (at_end() || c == '|' || c == ')' || at_rule_start()) return seq;
      std::vector<Symbol> unit = parse_primary(depth);
      skip_space();
      while (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{') {
        unit = parse_repetition(std::move(unit));
        skip_space();
      }
      seq.insert(seq.end(), unit.begin(), unit.end());
    }
  }

  // One unit a postfix operator applies to: a literal's characters, a class,
  // `.`, a rule reference, or a group (as a generated rule).
  std::vector<Symbol> parse_primary(int depth) {
    const size_t start = pos_;
    const char c = peek();
    if (c == '"') return parse_literal();
    if (c == '[') return {parse_class()};
    if (c == '.') {
      ++pos_;
      return {char_symbol(make_char_class({{0, kMaxCodePoint}}, false))};
    }
    if (c == '(') {
      if (depth + 1 > kMaxNesting) fail(pos_, "groups nested deeper than " + std::to_string(kMaxNesting));
      ++pos_;
      auto alternatives = parse_alternatives(depth + 1);
      if (peek() != ')') fail(pos_, "expected ')' closing the group opened at " + where(start));
      ++pos_;
      return {Symbol{true, add_generated(std::move(alternatives))}};
    }
    if (is_name_char(c)) {
      const std::string name = parse_name();
      return {Symbol{true, rule_id(name, start)}};
    }
    fail(pos_, std::string("unexpected '") + c + "'");
  }

  Symbol char_symbol(CharClass cls) {
    auto [it, added] = class_ids_.emplace(cls.ranges, static_cast<int32_t>(grammar_.classes.size()));
    if (added) grammar_.classes.push_back(std::move(cls));
    return Symbol{false, it->second};
  }

  std::vector<Symbol> parse_literal() {
    const size_t start = pos_++;
    std::vector<Symbol> seq;
    while (peek() != '"') {
      if (at_end()) fail(start, "unterminated string literal");
      const uint32_t c = parse_char();
      seq.push_back(char_symbol(make_char_class({{c, c}}, false)));
    }
    ++pos_;
    return seq;
  }

  Symbol parse_class() {
    const size_t start = pos_++;
    const bool negated = peek() == '^';
    if (negated) ++pos_;
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    while (peek() != ']') {
      if (at_end()) fail(start, "unterminated character class");
      const uint32_t first = parse_char();
      uint32_t last = first;
      if (peek() == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        last = parse_char();
        if (last < first) fail(pos_, "character range out of order");
      }
      ranges.emplace_back(first, last);
    }
    ++pos_;
    return char_symbol(make_char_class(std::move(ranges), negated));
  }

  // One character of a literal or class: an escape or a UTF-8 sequence.
  uint32_t parse_char() {
    const size_t start = pos_;
    const auto byte = static_cast<uint8_t>(text_[pos_]);
    if (byte == '\\') return parse_escape();
    if (byte < 0x80) {
      ++pos_;
      return byte;
    }
    const int length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 0;
    uint32_t c = byte & (0x7F >> length);
    if (length == 0 || pos_ + length > text_.size()) fail(start, "invalid UTF-8");
    for (int i = 1; i < length; ++i) {
      const auto next = static_cast<uint8_t>(text_[pos_ + i]);
      if ((next & 0xC0) != 0x80) fail(start, "invalid UTF-8");
      c = c << 6 | (next & 0x3F);
    }
    pos_ += length;
    return c;
  }

  uint32_t parse_escape() {
    const size_t start = pos_++;
    if (at_end()) fail(start, "unfinished escape");
    const char c = text_[pos_++];
    switch (c) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'x': return parse_hex(start, 2);
      case 'u': return parse_hex(start, 4);
      case 'U': return parse_hex(start, 8);
      default: break;
    }
    // Any other escaped ASCII punctuation stands for itself: \\ \" \] \[ \- \^ \/ ...
    if ((c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~')) {
      return static_cast<uint8_t>(c);
    }
    fail(start, std::string("unknown escape '\\") + c + "'");
  }

  uint32_t parse_hex(size_t start, int digits) {
    uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const int d = at_end() ? -1 : hex_value(text_[pos_]);
      if (d < 0) fail(start, "escape needs " + std::to_string(digits) + " hex digits");
      value = value << 4 | static_cast<uint32_t>(d);
      ++pos_;
    }
    if (value > kMaxCodePoint) fail(start, "escape beyond U+10FFFF");
    return value;
  }

  // {m} {m,} {m,n}, * + ?: the unit repeated, as inline copies (the minimum)
  // and generated rules (the rest): x* is R ::= x R | (empty), and the n - m
  // optional copies nest, R_k ::= x R_k-1 | (empty), so a string has one parse.
  std::vector<Symbol> parse_repetition(std::vector<Symbol> unit) {
    const size_t start = pos_;
    int32_t min = 0, max = -1;  // -1: unbounded
    const char op = text_[pos_++];
    if (op == '+') {
      min = 1;
    } else if (op == '?') {
      max = 1;
    } else if (op == '{') {
      skip_space();
      min = parse_count(start);
      skip_space();
      max = min;
      if (peek() == ',') {
        ++pos_;
        skip_space();
        max = peek() == '}' ? -1 : parse_count(start);
        skip_space();
      }
      if (peek() != '}') fail(pos_, "expected '}' closing the repetition");
      ++pos_;
      if (max >= 0 && max < min) fail(start, "repetition maximum below its minimum");
    }
    if (unit.empty()) return unit;
    const Symbol x = unit.size() == 1 ? unit[0] : Symbol{true, add_generated({unit})};
    std::vector<Symbol> out(static_cast<size_t>(min), x);
    count_elements(out.size());
    if (max < 0) {
      const auto r = static_cast<int32_t>(grammar_.rules.size());
      add_generated({{x, Symbol{true, r}}, {}});
      out.push_back(Symbol{true, r});
    } else if (max > min) {
      int32_t tail = add_generated({{x}, {}});
      for (int32_t k = min + 1; k < max; ++k) tail = add_generated({{x, Symbol{true, tail}}, {}});
      out.push_back(Symbol{true, tail});
    }
    return out;
  }

  int32_t parse_count(size_t start) {
    int64_t value = 0;
    const size_t digits_start = pos_;
    while (!at_end() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      value = value * 10 + (text_[pos_++] - '0');
      if (value > kMaxRepetition) fail(start, "repetition bound over " + std::to_string(kMaxRepetition));
    }
    if (pos_ == digits_start) fail(pos_, "expected a number in the repetition");
    return static_cast<int32_t>(value);
  }

  std::string_view text_;
  size_t pos_ = 0;
  ParsedGrammar grammar_;
  std::map<std::string, int32_t> rule_ids_;
  std::map<std::vector<std::pair<uint32_t, uint32_t>>, int32_t> class_ids_;
  int32_t current_ = 0;
  mutable size_t seen_at_ = 0;
  mutable int32_t seen_line_ = 1, seen_column_ = 1;
};

}  // namespace

ParsedGrammar parse_gbnf_text(std::string_view text) {
  if (text.size() > kMaxGrammarBytes) {
    throw Error("GBNF grammar too large: " + std::to_string(text.size()) + " bytes (at most " +
                std::to_string(kMaxGrammarBytes) + ")");
  }
  return GbnfParser(text).parse();
}

}  // namespace parley::grammar
