#pragma once
// The compiled form of a grammar, as the automaton walks it: every rule's
// alternatives laid end to end in one array of elements, each alternative
// closed by an End element.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/grammar/char_class.h"
#include "engine/grammar/grammar.h"

namespace parley::grammar {

// Size bounds of a grammar (GBNF text, and what it expands to).
inline constexpr size_t kMaxGrammarBytes = size_t{1} << 20;
inline constexpr int32_t kMaxRules = 1 << 18;
inline constexpr int32_t kMaxElements = 1 << 21;
inline constexpr int32_t kMaxRepetition = 10000;
inline constexpr int32_t kMaxNesting = 100;
// Parse stacks alive at once (an ambiguous grammar could have exponentially many).
inline constexpr size_t kMaxStacks = 10000;

enum class ElementKind : uint8_t {
  Char,  // one character of class `arg`
  Rule,  // rule `arg`
  End,   // end of an alternative
};

struct Element {
  ElementKind kind;
  int32_t arg;
};

class Grammar {
 public:
  std::vector<Element> elements;
  std::vector<int32_t> alternatives;   // the first element of each alternative, rule by rule
  std::vector<int32_t> rule_alts;      // rule r's alternatives: alternatives[rule_alts[r], rule_alts[r + 1])
  std::vector<CharClass> classes;
  int32_t root = 0;
};

}  // namespace parley::grammar
