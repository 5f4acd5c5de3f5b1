#include "engine/grammar/grammar.h"
#include "engine/grammar/json_rules.h"

namespace parley::grammar {

std::string json_value_rules(std::string_view prefix) {
  const std::string p(prefix);
  std::string rules;
  const auto rule = [&](const char* name, const std::string& body) { rules += p + name + " ::= " + body + "\n"; };
  rule("value", p + "object | " + p + "array | " + p + "string | " + p + "number | " + p + "boolean | " + p + "null");
  rule("object", "\"{\" " + p + "ws ( " + p + "string " + p + "ws \":\" " + p + "ws " + p + "value " + p + "ws ( \",\" " +
                     p + "ws " + p + "string " + p + "ws \":\" " + p + "ws " + p + "value " + p + "ws )* )? \"}\"");
  rule("array", "\"[\" " + p + "ws ( " + p + "value " + p + "ws ( \",\" " + p + "ws " + p + "value " + p +
                    "ws )* )? \"]\"");
  rule("string", "\"\\\"\" " + p + "char* \"\\\"\"");
  // \u escapes of surrogates only in pairs: a lone one is not a character.
  const std::string hex = "[0-9a-fA-F]";
  rule("char", "[^\"\\\\\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" ( [0-9a-cA-CeEfF] " + hex + "{3} | [dD] [0-7] " +
                   hex + "{2} | [dD] [89abAB] " + hex + "{2} \"\\\\u\" [dD] [c-fC-F] " + hex + "{2} ) )");
  rule("number", p + "integer ( \".\" [0-9]+ )? ( [eE] [-+]? [0-9]+ )?");
  rule("integer", "\"-\"? ( \"0\" | [1-9] [0-9]* )");
  rule("boolean", "\"true\" | \"false\"");
  rule("null", "\"null\"");
  rule("ws", "( \" \" | \"\\n\" [ \\t]{0,20} )?");
  return rules;
}

std::string gbnf_literal(std::string_view s) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;  // UTF-8 passes through
    }
  }
  return out + "\"";
}

const std::string& json_gbnf(bool object_only) {
  static const std::string any = "root ::= value\n" + json_value_rules("");
  static const std::string object = "root ::= object\n" + json_value_rules("");
  return object_only ? object : any;
}

}  // namespace parley::grammar
