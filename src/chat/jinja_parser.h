#pragma once
// Builds the statement tree of a template from its tokens, with Jinja's
// grammar and operator precedence.
#include <vector>

#include "chat/jinja_ast.h"
#include "chat/jinja_lexer.h"

namespace parley::chat::jinja {

Body parse(const std::vector<Token>& tokens);  // throws SyntaxError

}  // namespace parley::chat::jinja
