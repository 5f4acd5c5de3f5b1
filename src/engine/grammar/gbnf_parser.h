#pragma once
// GBNF text -> rules of symbols (before the checks and the flat layout).
// Groups and repetitions become generated rules, so every alternative is a
// plain sequence of characters and rule references.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/char_class.h"

namespace parley::grammar {

struct Symbol {
  bool is_rule;
  int32_t index;  // a rule, or a class of ParsedGrammar::classes
};

struct ParsedRule {
  std::string name;        // of the rule as written; generated ones: their owner's
  bool generated = false;  // a group or repetition
  bool defined = false;
  int32_t line = 0, column = 0;  // definition, or first reference while undefined
  std::vector<std::vector<Symbol>> alternatives;
};

struct ParsedGrammar {
  std::vector<ParsedRule> rules;
  std::vector<CharClass> classes;
  int32_t element_count = 0;
};

// Throws parley::Error "GBNF line:column: what" for syntax errors and the size
// bounds of grammar_rules.h. Rules may be referenced before they are defined;
// whether all are defined is for check_grammar().
ParsedGrammar parse_gbnf_text(std::string_view text);

}  // namespace parley::grammar
