#pragma once
// GBNF rules for any JSON value, shared by json_gbnf() and the JSON Schema
// converter (which prefixes the names so they cannot clash with its own).
#include <string>
#include <string_view>

namespace parley::grammar {

// The rules value, object, array, string, char, number, integer, boolean,
// null and ws, each named prefix + name. Whitespace between tokens is at most
// one space, or one newline and 20 spaces or tabs (as llama.cpp's json.gbnf),
// so that a model cannot spin on whitespace.
std::string json_value_rules(std::string_view prefix);

// s as a GBNF string literal (quotes included).
std::string gbnf_literal(std::string_view s);

}  // namespace parley::grammar
