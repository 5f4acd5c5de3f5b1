#pragma once
// What makes parsed GBNF unusable though it parses: rules used but never
// defined, left recursion (the matcher would expand such a rule forever), and
// a root that can match no text at all.
#include <cstdint>

#include "engine/grammar/gbnf_parser.h"

namespace parley::grammar {

// Throws parley::Error naming the rule and where it is (line:column).
void check_grammar(const ParsedGrammar& grammar, int32_t root);

}  // namespace parley::grammar
