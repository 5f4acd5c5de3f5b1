// response_format / grammar parsing and the compiled-grammar cache.
#include "serve/api/structured_output.h"

#include <gtest/gtest.h>

#include "serve/transport/api_error.h"
#include "util/error.h"

namespace parley::serve {
namespace {

TEST(GrammarCache, CompilesASourceOnceAndEvictsTheLeastRecentlyUsed) {
  GrammarCache cache(2);
  const auto a = cache.get("a", [] { return std::string(R"(root ::= "a")"); });
  EXPECT_EQ(cache.get("a", [] { return std::string(R"(root ::= "a")"); }), a);  // the same compiled grammar
  cache.get("b", [] { return std::string(R"(root ::= "b")"); });
  cache.get("a", [] { return std::string(R"(root ::= "a")"); });  // a is now the most recent
  cache.get("c", [] { return std::string(R"(root ::= "c")"); });  // evicts b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.get("a", [] { return std::string(R"(root ::= "a")"); }), a);
  EXPECT_THROW(cache.get("bad", [] { return std::string("root ::= ("); }), Error);
}

// The `param` of the 400 the body gets.
std::string refusal_of(const std::string& body) {
  GrammarCache cache;
  try {
    parse_output_format(json::parse(body), body, cache);
  } catch (const ApiError& e) {
    return e.to_json()["error"].value("param", "");
  }
  ADD_FAILURE() << "accepted: " << body;
  return "";
}

TEST(OutputFormat, ParsesEachFormAndNamesWhatIsWrong) {
  GrammarCache cache;
  const std::string schema = R"({"response_format": {"type": "json_schema", "json_schema": {"name": "p",
      "schema": {"type": "object", "properties": {"b": {"type": "boolean"}, "a": {"type": "integer"}}, "required": ["b", "a"]}}}})";
  const OutputGrammar g = parse_output_format(json::parse(schema), schema, cache);
  ASSERT_TRUE(g.grammar);
  EXPECT_TRUE(g.json);
  grammar::Matcher m(g.grammar);
  EXPECT_FALSE(m.allows(R"({"a")"));  // properties in the schema's order, not sorted
  EXPECT_TRUE(m.accept(R"({"b": true, "a": 3})"));
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(parse_output_format(json::parse(R"({"response_format": {"type": "text"}})"), "", cache).grammar);
  EXPECT_TRUE(parse_output_format(json::parse(R"({"grammar": "root ::= \"x\""})"), "", cache).grammar);
  EXPECT_EQ(refusal_of(R"({"response_format": {"type": "xml"}})"), "response_format.type");
  EXPECT_EQ(refusal_of(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": {"type": "string", "pattern": "a"}}}})"),
            "response_format.json_schema.schema");
  EXPECT_EQ(refusal_of(R"({"grammar": "root ::= undefined"})"), "grammar");
  EXPECT_EQ(refusal_of(R"({"grammar": "root ::= \"x\"", "response_format": {"type": "json_object"}})"), "grammar");
}

}  // namespace
}  // namespace parley::serve
