#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/grammar/grammar.h"
#include "grammar_test_util.h"

namespace parley::grammar {
namespace {

using grammar_test::matches;

struct MatchCase {
  const char* grammar;
  std::vector<std::string> accepted;
  std::vector<std::string> rejected;
};

TEST(GrammarMatcher, EveryConstruct) {
  const MatchCase cases[] = {
      {"root ::= \"abc\"", {"abc"}, {"", "ab", "abcd", "abd"}},
      {"root ::= \"a\" | \"bc\" | \"\"", {"a", "bc", ""}, {"b", "ac"}},
      {"root ::= ( \"a\" | \"b\" )+ \"c\"", {"ac", "abbac"}, {"c", "abd"}},
      {"root ::= [a-c0-9]", {"a", "c", "5"}, {"d", "", "ab"}},
      {"root ::= [^a-c]", {"d", "\xC3\xA9", "\xF0\x9F\x98\x80"}, {"a", "b"}},
      {"root ::= .", {"x", "\n", "\xE2\x82\xAC"}, {"", "xy"}},
      {"root ::= \"x\"*", {"", "x", "xxxxxx"}, {"y"}},
      {"root ::= \"x\"+", {"x", "xxx"}, {""}},
      {"root ::= \"x\"?", {"", "x"}, {"xx"}},
      {"root ::= \"ab\"{2}", {"abab"}, {"ab", "ababab"}},
      {"root ::= \"x\"{2,}", {"xx", "xxxxx"}, {"x"}},
      {"root ::= \"x\"{1,3}", {"x", "xx", "xxx"}, {"", "xxxx"}},
      {"root ::= \"x\"{0,0} \"y\"", {"y"}, {"xy"}},
      {"root ::= \"\\n\\t\\\\\\\"\\x41\\u00e9\\U0001F600\"", {"\n\t\\\"A\xC3\xA9\xF0\x9F\x98\x80"}, {"A"}},
      {"root ::= [\\]\\-\\\\]", {"]", "-", "\\"}, {"a"}},
      {"root ::= [\\u00e0-\\u00ff]", {"\xC3\xA0", "\xC3\xBF"}, {"\xC3\x9F", "a"}},
      {"root ::= \"\xE2\x82\xAC\"", {"\xE2\x82\xAC"}, {"\xE2\x82", "E"}},
      {"root ::= a b\na ::= \"a\" | \"\"\nb ::= a \"b\"", {"ab", "aab", "b"}, {"aaab", "a"}},
      {"root ::= \"(\" root \")\" | \"\"", {"", "()", "((()))"}, {"(()", ")"}},
  };
  for (const MatchCase& c : cases) {
    auto g = parse_gbnf(c.grammar);
    for (const auto& s : c.accepted) EXPECT_TRUE(matches(g, s)) << c.grammar << " should match \"" << s << "\"";
    for (const auto& s : c.rejected) EXPECT_FALSE(matches(g, s)) << c.grammar << " should not match \"" << s << "\"";
  }
}

TEST(GrammarMatcher, InvalidUtf8NeverAllowed) {
  auto g = parse_gbnf("root ::= .*");
  for (const char* bad : {"\xFF", "\xC0\x80", "\xC1\xBF", "\x80", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                          "\xF5\x80\x80\x80", "\xC3\x28"}) {
    Matcher m(g);
    EXPECT_FALSE(m.accept(bad)) << ::testing::PrintToString(std::string(bad));
  }
  Matcher m(g);
  EXPECT_TRUE(m.accept("\xF4\x8F\xBF\xBF"));  // U+10FFFF
  EXPECT_TRUE(m.accept("\xED\x9F\xBF"));      // U+D7FF
}

TEST(GrammarMatcher, MultiByteSplitAtEveryPosition) {
  auto g = parse_gbnf("root ::= \"<\" [\\u00e9\\u20ac\\U0001F600]+ \">\"");
  const std::string text = "<\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80>";
  for (size_t i = 0; i <= text.size(); ++i) {
    for (size_t j = i; j <= text.size(); ++j) {
      Matcher m(g);
      ASSERT_TRUE(m.accept(text.substr(0, i))) << i;
      ASSERT_TRUE(m.accept(text.substr(i, j - i))) << i << " " << j;
      ASSERT_TRUE(m.accept(text.substr(j))) << j;
      EXPECT_TRUE(m.can_end());
    }
  }
  // A partial character the class cannot complete is refused at its first byte.
  Matcher m(g);
  ASSERT_TRUE(m.accept("<"));
  EXPECT_FALSE(m.allows("\xC3\xA8"));
  EXPECT_TRUE(m.allows("\xC3"));
  EXPECT_FALSE(m.allows("\xE3"));  // no class member in U+3000..U+3FFF
  EXPECT_TRUE(m.allows("\xE2\x82"));
  EXPECT_FALSE(m.allows("\xE2\x83"));
  ASSERT_TRUE(m.accept("\xE2"));
  EXPECT_FALSE(m.can_end());
  EXPECT_FALSE(m.allows(">"));
  EXPECT_TRUE(m.accept("\x82\xAC>"));
  EXPECT_TRUE(m.must_end());
}

TEST(GrammarMatcher, CanEndAndMustEnd) {
  auto g = parse_gbnf("root ::= \"a\" \"b\"?");
  Matcher m(g);
  EXPECT_FALSE(m.can_end());
  EXPECT_FALSE(m.must_end());
  ASSERT_TRUE(m.accept("a"));
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(m.must_end());
  ASSERT_TRUE(m.accept("b"));
  EXPECT_TRUE(m.can_end());
  EXPECT_TRUE(m.must_end());
  EXPECT_FALSE(m.allows("b"));
  EXPECT_TRUE(m.allows(""));
}

TEST(GrammarMatcher, RejectedAcceptLeavesStateUnchanged) {
  auto g = parse_gbnf("root ::= \"ab\" [0-9]* \"c\"");
  Matcher m(g);
  ASSERT_TRUE(m.accept("ab1"));
  EXPECT_FALSE(m.accept("2x"));
  EXPECT_FALSE(m.accept("\xC3"));  // a valid lead byte the grammar cannot take
  EXPECT_TRUE(m.accept("2"));
  EXPECT_TRUE(m.accept("c"));
  EXPECT_TRUE(m.must_end());
}

TEST(GrammarMatcher, CopiesAreIndependent) {
  auto g = parse_gbnf("root ::= \"a\" ( \"b\" | \"c\" )");
  Matcher m(g);
  ASSERT_TRUE(m.accept("a"));
  Matcher copy = m;
  ASSERT_TRUE(m.accept("b"));
  EXPECT_TRUE(copy.allows("c"));
  EXPECT_TRUE(copy.accept("c"));
  EXPECT_FALSE(m.allows("c"));
}

TEST(GrammarMatcher, AmbiguityIsBounded) {
  // Every split of the x's is a parse: the stacks are deduplicated, so there
  // are few of them whatever the length.
  auto g = parse_gbnf("root ::= a*\na ::= \"x\" | \"xx\" | \"xxx\"");
  Matcher m(g);
  EXPECT_TRUE(m.accept(std::string(5000, 'x')));
  EXPECT_TRUE(m.can_end());
  // Genuinely many live stacks (2^n ways to close n brackets) are refused.
  auto closings = parse_gbnf("root ::= \"(\" root \")\" | \"(\" root \"]\" | \"\"");
  Matcher c(closings);
  EXPECT_THROW(c.accept(std::string(20, '(')), Error);
}

TEST(GrammarMatcher, JsonGrammar) {
  auto g = parse_gbnf(json_gbnf(false));
  for (const char* ok : {"{}", "[]", "{\"a\": [1, -2.5e3, true, null, \"x\\u00e9\\n\"]}", "\"s\"", "0", "-0.1E+2",
                         "{\n  \"k\": {}\n}", "[ ]"}) {
    EXPECT_TRUE(matches(g, ok)) << ok;
  }
  for (const char* bad : {"{", "01", "[1,]", "{\"a\" 1}", "\"\x01\"", " {}", "{}  ", "tru", "\"\\x\"", "1.", "[1 2]",
                          "{\"a\":1,}", "[                          1]"}) {
    EXPECT_FALSE(matches(g, bad)) << bad;
  }
  auto object = parse_gbnf(json_gbnf(true));
  EXPECT_TRUE(matches(object, "{\"a\": 1}"));
  EXPECT_FALSE(matches(object, "[1]"));
  Matcher m(object);
  ASSERT_TRUE(m.accept("{}"));
  EXPECT_TRUE(m.must_end());
}

}  // namespace
}  // namespace parley::grammar
