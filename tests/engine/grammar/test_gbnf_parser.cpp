#include <gtest/gtest.h>

#include <string>

#include "engine/grammar/grammar.h"
#include "grammar_test_util.h"

namespace parley::grammar {
namespace {

using grammar_test::error_of;
using grammar_test::matches;

std::string parse_error(const std::string& text) {
  return error_of([&] { parse_gbnf(text); });
}

TEST(GrammarParse, AcceptsEachConstruct) {
  const char* grammars[] = {
      "root ::= \"a\"",
      "root ::= \"a\" | \"b\"\n",
      "root ::= ( \"a\" | \"b\" ) \"c\"",
      "root ::= [a-z0-9_] [^\"\\\\] .",
      "root ::= \"x\"* \"y\"+ \"z\"? [0-9]{2} [0-9]{1,} [0-9]{0,3}",
      "root ::= item\nitem ::= \"\\n\\t\\r\\\\\\\"\\x41\\u00e9\\U0001F600\"",
      "# comment\nroot ::= a # trailing\n  | b\na ::= \"a\"\nb ::=\n  \"b\"\n",
      "root ::= | \"a\"",
      "root ::= \"\"",
      "ws-1 ::= [ \\t]\nroot ::= ws-1 \"x\"",
  };
  for (const char* g : grammars) EXPECT_EQ(parse_error(g), "") << g;
}

TEST(GrammarParse, RuleMayContinueOverLines) {
  auto g = parse_gbnf("root ::= \"a\"\n  \"b\"\n  | \"c\"\nother ::= \"d\"");
  EXPECT_TRUE(matches(g, "ab"));
  EXPECT_TRUE(matches(g, "c"));
  EXPECT_FALSE(matches(g, "d"));
}

TEST(GrammarParse, CustomRoot) {
  auto g = parse_gbnf("start ::= \"s\"", "start");
  EXPECT_TRUE(matches(g, "s"));
}

TEST(GrammarParse, SyntaxErrorsSayWhere) {
  EXPECT_NE(parse_error("root ::= \"a").find("1:10"), std::string::npos) << parse_error("root ::= \"a");
  EXPECT_NE(parse_error("root ::= \"a\"\nx ::= ( \"b\"").find("2:7"), std::string::npos);
  EXPECT_NE(parse_error("root = \"a\"").find("1:6"), std::string::npos);
  EXPECT_NE(parse_error("root ::= [a-").find("1:10"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"\\q\"").find("unknown escape"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"{3,1}").find("below"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\" )").find("1:14"), std::string::npos);
  EXPECT_NE(parse_error("root ::= [z-a]").find("out of order"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"\nroot ::= \"b\"").find("defined twice"), std::string::npos);
}

TEST(GrammarParse, UndefinedRuleSaysWhere) {
  const std::string e = parse_error("root ::= \"a\" missing");
  EXPECT_NE(e.find("undefined rule 'missing'"), std::string::npos) << e;
  EXPECT_NE(e.find("1:14"), std::string::npos) << e;
}

TEST(GrammarParse, MissingRoot) {
  EXPECT_NE(parse_error("start ::= \"a\"").find("no rule named 'root'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_gbnf("root ::= \"a\"", "top"); }).find("'top'"), std::string::npos);
}

TEST(GrammarParse, LeftRecursion) {
  EXPECT_NE(parse_error("root ::= root \"a\" | \"b\"").find("left recursion"), std::string::npos);
  const std::string indirect = parse_error("root ::= a \"x\" | \"y\"\na ::= b \"z\"\nb ::= root | \"w\"");
  EXPECT_NE(indirect.find("left recursion"), std::string::npos) << indirect;
  const std::string nullable = parse_error("root ::= e root \"a\" | \"b\"\ne ::= \"\" | \"c\"");
  EXPECT_NE(nullable.find("left recursion"), std::string::npos) << nullable;
  EXPECT_NE(parse_error("root ::= ( \"x\"? root ) \"a\" | \"b\"").find("left recursion"), std::string::npos);
  // Right recursion is fine.
  EXPECT_EQ(parse_error("root ::= \"a\" root | \"b\""), "");
}

TEST(GrammarParse, UnproductiveRoot) {
  EXPECT_NE(parse_error("root ::= root \"a\"").find("cannot match any text"), std::string::npos);
  EXPECT_NE(parse_error("root ::= a\na ::= a").find("cannot match any text"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\" root").find("cannot match any text"), std::string::npos);
  EXPECT_NE(parse_error("root ::= [^\\x00-\\U0010FFFF]").find("cannot match any text"), std::string::npos);
}

TEST(GrammarParse, SizeBounds) {
  EXPECT_NE(parse_error("root ::= \"a\"{10001}").find("repetition bound"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"{1,99999999999999}").find("repetition bound"), std::string::npos);
  EXPECT_EQ(parse_error("root ::= \"a\"{0,10000}"), "");
  EXPECT_NE(parse_error("root ::= \"" + std::string(size_t{1} << 20, 'a') + "\"").find("too large"),
            std::string::npos);
  // Nested repetitions multiply: refused by the element bound, not expanded.
  std::string nested = "root ::= a4\na0 ::= \"x\"\n";
  for (int i = 1; i <= 4; ++i) nested += "a" + std::to_string(i) + " ::= a" + std::to_string(i - 1) + "{10000}\n";
  EXPECT_EQ(parse_error(nested), "");  // each level references the one below: linear
  std::string huge = "root ::= r0\n";
  for (int i = 0; i < 300; ++i) huge += "r" + std::to_string(i) + " ::= \"a\"{10000}\n";
  EXPECT_NE(parse_error(huge).find("grammar too large"), std::string::npos);
}

TEST(GrammarParse, DeepNestingRefused) {
  const std::string e = parse_error("root ::= " + std::string(10000, '(') + "\"a\"" + std::string(10000, ')'));
  EXPECT_NE(e.find("nested deeper than 100"), std::string::npos) << e;
  EXPECT_EQ(parse_error("root ::= " + std::string(100, '(') + "\"a\"" + std::string(100, ')')), "");
}

}  // namespace
}  // namespace parley::grammar
