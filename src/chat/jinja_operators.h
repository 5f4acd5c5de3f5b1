#pragma once
// Python's arithmetic on template values.
#include <string_view>

#include "chat/jinja_value.h"

namespace parley::chat::jinja {

// + - * / // % ** on numbers, + on strings and lists, * repeating them, and
// Jinja's ~ (string concatenation of any two values).
Value binary_op(std::string_view op, const Value& a, const Value& b);
// Unary - and +.
Value unary_op(std::string_view op, const Value& v);

}  // namespace parley::chat::jinja
