#pragma once
// Builds the statement tree of a template from its tokens, with Jinja's
// grammar and operator precedence.
#include <vector>

#include "tokenizer/jinja_ast.h"
#include "tokenizer/jinja_lexer.h"

namespace parley::jinja {

Body parse(const std::vector<Token>& tokens);  // throws SyntaxError

}  // namespace parley::jinja
