#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "engine/grammar/grammar.h"
#include "grammar_test_util.h"

namespace parley::grammar {
namespace {

using nlohmann::json;
using grammar_test::error_of;
using grammar_test::matches;

std::shared_ptr<const Grammar> schema_grammar(const json& schema) { return parse_gbnf(json_schema_to_gbnf(schema)); }

// Random texts of the schema's grammar: each must parse as JSON and pass check.
void expect_random_texts_valid(const json& schema, const std::function<bool(const json&)>& check, int count = 40) {
  auto g = schema_grammar(schema);
  std::mt19937 rng(7);
  int finished = 0;
  for (int i = 0; i < count * 3 && finished < count; ++i) {
    const auto text = grammar_test::random_text(g, rng);
    if (!text) continue;  // the walk grew too long
    ++finished;
    json value;
    ASSERT_NO_THROW(value = json::parse(*text)) << *text;
    EXPECT_TRUE(check(value)) << *text;
  }
  EXPECT_GE(finished, count / 2);
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

const json kPerson = json::parse(R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 10},
    "age": {"type": "integer", "minimum": 0, "maximum": 150},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "maxItems": 3},
    "email": {"type": ["string", "null"], "format": "uuid"},
    "kind": {"enum": ["a", "b", 3, null]}
  },
  "required": ["name", "age", "kind"]
})");

bool person_ok(const json& v) {
  if (!v.is_object() || !v.contains("name") || !v.contains("age") || !v.contains("kind")) return false;
  for (const auto& [k, _] : v.items()) {
    if (k != "name" && k != "age" && k != "tags" && k != "email" && k != "kind") return false;
  }
  const auto& name = v["name"];
  if (!name.is_string() || code_points(name.get<std::string>()) < 1 || code_points(name.get<std::string>()) > 10) {
    return false;
  }
  if (!v["age"].is_number_integer() || v["age"].get<int64_t>() < 0 || v["age"].get<int64_t>() > 150) return false;
  if (v.contains("tags")) {
    if (!v["tags"].is_array() || v["tags"].size() > 3) return false;
    for (const auto& t : v["tags"]) {
      if (!t.is_string() || code_points(t.get<std::string>()) > 3) return false;
    }
  }
  if (v.contains("email") && !v["email"].is_null() && (!v["email"].is_string() || v["email"].get<std::string>().size() != 36)) {
    return false;
  }
  const auto& kind = v["kind"];
  return kind == "a" || kind == "b" || kind == 3 || kind.is_null();
}

TEST(JsonSchema, RandomTextsSatisfyObjectSchema) { expect_random_texts_valid(kPerson, person_ok); }

TEST(JsonSchema, KnownDocuments) {
  auto g = schema_grammar(kPerson);
  for (const char* ok : {R"({"age": 3, "kind": "a", "name": "Bo"})",
                         R"({"age": 150, "email": null, "kind": 3, "name": "Bo", "tags": ["x", "yz"]})",
                         R"({"age": 0, "email": "123e4567-e89b-12d3-a456-426614174000", "kind": null, "name": "\u00e9"})",
                         "{\n  \"age\": 1,\n  \"kind\": \"b\",\n  \"name\": \"x\"\n}"}) {
    EXPECT_TRUE(matches(g, ok)) << ok;
  }
  for (const char* bad : {R"({"age": 3, "kind": "a"})",                          // missing required
                          R"({"age": "3", "kind": "a", "name": "Bo"})",          // wrong type
                          R"({"age": 151, "kind": "a", "name": "Bo"})",          // out of range
                          R"({"age": -1, "kind": "a", "name": "Bo"})",           // out of range
                          R"({"age": 3, "kind": "c", "name": "Bo"})",            // bad enum
                          R"({"age": 3, "kind": "a", "name": ""})",              // too short
                          R"({"age": 3, "kind": "a", "name": "12345678901"})",   // too long
                          R"({"age": 3, "kind": "a", "name": "B", "tags": ["a", "b", "c", "d"]})",  // too many
                          R"({"age": 3, "kind": "a", "name": "B", "extra": 1})",  // not in properties
                          R"({"kind": "a", "age": 3, "name": "B"})",              // out of order
                          R"({"age": 3, "kind": "a", "name": "B",})"}) {
    EXPECT_FALSE(matches(g, bad)) << bad;
  }
}

TEST(JsonSchema, PropertyOrderOfOrderedJson) {
  const auto schema = nlohmann::ordered_json::parse(
      R"({"type": "object", "properties": {"b": {"type": "integer"}, "a": {"type": "integer"}}, "required": ["a"]})");
  auto g = parse_gbnf(json_schema_to_gbnf_ordered(schema));
  EXPECT_TRUE(matches(g, R"({"b": 1, "a": 2})"));
  EXPECT_TRUE(matches(g, R"({"a": 2})"));
  EXPECT_FALSE(matches(g, R"({"a": 2, "b": 1})"));
  EXPECT_FALSE(matches(g, R"({"b": 1})"));
}

TEST(JsonSchema, OptionalPropertiesAndAdditional) {
  const json schema = json::parse(R"({"type": "object", "properties": {"a": {"type": "integer"},
      "b": {"type": "boolean"}, "c": {"type": "null"}}, "required": ["b"], "additionalProperties": {"type": "integer"}})");
  auto g = schema_grammar(schema);
  for (const char* ok : {R"({"b": true})", R"({"a": 1, "b": false, "c": null})", R"({"b": true, "x": 5, "y": 6})",
                         R"({"a": 1, "b": true, "z": 1})"}) {
    EXPECT_TRUE(matches(g, ok)) << ok;
  }
  for (const char* bad : {R"({})", R"({"a": 1})", R"({"b": true, "x": "s"})", R"({"b": true,, "c": null})"}) {
    EXPECT_FALSE(matches(g, bad)) << bad;
  }
  auto all_optional = schema_grammar(json::parse(R"({"properties": {"a": {"const": 1}, "b": {"const": 2}}})"));
  for (const char* ok : {"{}", R"({"a": 1})", R"({"b": 2})", R"({"a": 1, "b": 2})"}) EXPECT_TRUE(matches(all_optional, ok)) << ok;
  EXPECT_FALSE(matches(all_optional, R"({, "b": 2})"));
  auto open = schema_grammar(json::parse(R"({"type": "object", "additionalProperties": true})"));
  EXPECT_TRUE(matches(open, R"({"any": [1, {"x": null}]})"));
  auto closed = schema_grammar(json::parse(R"({"type": "object"})"));
  EXPECT_TRUE(matches(closed, "{}"));
  EXPECT_FALSE(matches(closed, R"({"a": 1})"));
}

TEST(JsonSchema, IntegerRangesExact) {
  struct Range {
    std::optional<int64_t> lo, hi;
  };
  const Range ranges[] = {{0, 0},       {1, 9},         {-5, 5},  {-123, -7},     {7, 123},     {0, 1000},
                          {99, 101},    {-1000000, -999990}, {13, std::nullopt}, {std::nullopt, -13},
                          {-10, std::nullopt}, {std::nullopt, 250}, {1, 1}, {-1, -1}, {10, 99}, {100, 19999}};
  for (const Range& r : ranges) {
    json schema = {{"type", "integer"}};
    if (r.lo) schema["minimum"] = *r.lo;
    if (r.hi) schema["maximum"] = *r.hi;
    auto g = schema_grammar(schema);
    const int64_t from = (r.lo ? *r.lo : (r.hi ? *r.hi : 0)) - 60, to = (r.hi ? *r.hi : (r.lo ? *r.lo : 0)) + 60;
    for (int64_t v = from; v <= to; ++v) {
      const bool in = (!r.lo || v >= *r.lo) && (!r.hi || v <= *r.hi);
      EXPECT_EQ(matches(g, std::to_string(v)), in) << schema.dump() << " " << v;
    }
    for (const int64_t v : {int64_t{1} << 40, -(int64_t{1} << 40), int64_t{20000}, int64_t{-20000}}) {
      const bool in = (!r.lo || v >= *r.lo) && (!r.hi || v <= *r.hi);
      EXPECT_EQ(matches(g, std::to_string(v)), in) << schema.dump() << " " << v;
    }
    EXPECT_FALSE(matches(g, "-0")) << schema.dump();
    EXPECT_FALSE(matches(g, "007")) << schema.dump();
  }
  auto extremes = schema_grammar({{"type", "integer"}, {"minimum", INT64_MIN + 1}, {"maximum", INT64_MAX - 1}});
  EXPECT_TRUE(matches(extremes, std::to_string(INT64_MAX - 1)));
  EXPECT_FALSE(matches(extremes, std::to_string(INT64_MAX)));
  EXPECT_TRUE(matches(extremes, std::to_string(INT64_MIN + 1)));
  auto exclusive = schema_grammar({{"type", "integer"}, {"exclusiveMinimum", 0}, {"exclusiveMaximum", 10.5}});
  EXPECT_FALSE(matches(exclusive, "0"));
  EXPECT_TRUE(matches(exclusive, "1"));
  EXPECT_TRUE(matches(exclusive, "10"));
  EXPECT_FALSE(matches(exclusive, "11"));
  EXPECT_NE(error_of([] { json_schema_to_gbnf({{"type", "integer"}, {"minimum", 5}, {"maximum", 4}}); }), "");
}

TEST(JsonSchema, NumbersAndFormats) {
  auto number = schema_grammar({{"type", "number"}, {"minimum", 0}});
  for (const char* ok : {"0", "0.5", "12e-3", "7"}) EXPECT_TRUE(matches(number, ok)) << ok;
  for (const char* bad : {"-1", "-0.5", ".5", "01"}) EXPECT_FALSE(matches(number, bad)) << bad;
  auto date = schema_grammar({{"type", "string"}, {"format", "date"}});
  EXPECT_TRUE(matches(date, "\"2024-02-29\""));
  EXPECT_FALSE(matches(date, "\"2024-13-01\""));
  EXPECT_FALSE(matches(date, "\"2024-1-01\""));
  auto time = schema_grammar({{"type", "string"}, {"format", "time"}});
  EXPECT_TRUE(matches(time, "\"23:59:59Z\""));
  EXPECT_TRUE(matches(time, "\"08:00:00.123+02:00\""));
  EXPECT_FALSE(matches(time, "\"24:00:00Z\""));
  auto date_time = schema_grammar({{"type", "string"}, {"format", "date-time"}});
  EXPECT_TRUE(matches(date_time, "\"2024-01-31T12:00:00-05:00\""));
  EXPECT_FALSE(matches(date_time, "\"2024-01-31 12:00:00Z\""));
  auto uuid = schema_grammar({{"type", "string"}, {"format", "uuid"}});
  EXPECT_TRUE(matches(uuid, "\"123e4567-E89B-12d3-a456-426614174000\""));
  EXPECT_FALSE(matches(uuid, "\"123e4567-e89b-12d3-a456-42661417400\""));
}

TEST(JsonSchema, ArraysWithBoundsAndPrefix) {
  auto bounded = schema_grammar({{"type", "array"}, {"items", {{"type", "integer"}}}, {"minItems", 2}, {"maxItems", 3}});
  for (const char* ok : {"[1, 2]", "[1,2,3]"}) EXPECT_TRUE(matches(bounded, ok)) << ok;
  for (const char* bad : {"[]", "[1]", "[1,2,3,4]", "[1,\"a\"]"}) EXPECT_FALSE(matches(bounded, bad)) << bad;
  auto tuple = schema_grammar(json::parse(
      R"({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "boolean"}, "minItems": 1})"));
  for (const char* ok : {"[\"a\"]", "[\"a\", 1]", "[\"a\", 1, true, false]"}) EXPECT_TRUE(matches(tuple, ok)) << ok;
  for (const char* bad : {"[]", "[1]", "[\"a\", true]", "[\"a\", 1, 2]"}) EXPECT_FALSE(matches(tuple, bad)) << bad;
  auto closed_tuple = schema_grammar(json::parse(R"({"prefixItems": [{"const": 1}, {"const": 2}]})"));
  for (const char* ok : {"[]", "[1]", "[1, 2]"}) EXPECT_TRUE(matches(closed_tuple, ok)) << ok;
  EXPECT_FALSE(matches(closed_tuple, "[1, 2, 3]"));
  expect_random_texts_valid(
      {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", -3}, {"maximum", 3}}}, {"maxItems", 4}},
      [](const json& v) {
        if (!v.is_array() || v.size() > 4) return false;
        for (const auto& e : v) {
          if (!e.is_number_integer() || e.get<int64_t>() < -3 || e.get<int64_t>() > 3) return false;
        }
        return true;
      });
}

TEST(JsonSchema, RecursiveRefs) {
  const json tree = json::parse(R"({
    "$defs": {"node": {"type": "object", "properties": {
      "value": {"type": "integer"},
      "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
      "required": ["value", "children"]}},
    "$ref": "#/$defs/node"})");
  auto g = schema_grammar(tree);
  EXPECT_TRUE(matches(g, R"({"children": [{"children": [], "value": 2}], "value": 1})"));
  EXPECT_FALSE(matches(g, R"({"children": [{"children": []}], "value": 1})"));
  std::function<bool(const json&)> node_ok = [&](const json& v) {
    // "value" may be past int64: nlohmann reads such integers as doubles.
    if (!v.is_object() || v.size() != 2 || !v["value"].is_number() || !v["children"].is_array()) return false;
    if (v["children"].size() > 2) return false;
    for (const auto& c : v["children"]) {
      if (!node_ok(c)) return false;
    }
    return true;
  };
  expect_random_texts_valid(tree, node_ok, 20);
  auto self = schema_grammar(json::parse(
      R"({"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}, "required": ["next"]})"));
  EXPECT_TRUE(matches(self, R"({"next": {"next": null}})"));
  auto definitions = schema_grammar(json::parse(R"({"definitions": {"a b": {"type": "boolean"}}, "$ref": "#/definitions/a b"})"));
  EXPECT_TRUE(matches(definitions, "true"));
}

TEST(JsonSchema, AnyOfAllOfConstAndAnyValue) {
  auto any_of = schema_grammar(json::parse(R"({"oneOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]})"));
  EXPECT_TRUE(matches(any_of, "5"));
  EXPECT_TRUE(matches(any_of, "\"x\""));
  EXPECT_FALSE(matches(any_of, "\"xy\""));
  auto all_of = schema_grammar(json::parse(R"({"$defs": {"base": {"type": "object", "properties": {"id": {"type": "integer"}},
      "required": ["id"]}}, "allOf": [{"$ref": "#/$defs/base"}, {"properties": {"name": {"type": "string"}}, "required": ["name"]}]})"));
  EXPECT_TRUE(matches(all_of, R"({"id": 1, "name": "n"})"));
  EXPECT_FALSE(matches(all_of, R"({"id": 1})"));
  auto constant = schema_grammar(json::parse(R"({"const": {"a": [1, "é"]}})"));
  EXPECT_TRUE(matches(constant, R"({"a":[1,"é"]})"));
  for (const json& any : {json::object(), json(true), json::parse(R"({"description": "anything"})")}) {
    auto g = schema_grammar(any);
    EXPECT_TRUE(matches(g, R"({"x": [1, null, "s"]})"));
    EXPECT_TRUE(matches(g, "-1.5"));
  }
}

TEST(JsonSchema, UnsupportedKeywordsNamed) {
  for (const char* keyword : {"pattern", "uniqueItems", "multipleOf", "not", "if", "patternProperties", "minProperties",
                              "contains", "nullable"}) {
    const std::string e = error_of([&] { json_schema_to_gbnf({{"type", "string"}, {keyword, 1}}); });
    EXPECT_NE(e.find(std::string("'") + keyword + "'"), std::string::npos) << keyword << ": " << e;
  }
  EXPECT_NE(error_of([] { json_schema_to_gbnf({{"type", "string"}, {"format", "email"}}); }).find("'email'"),
            std::string::npos);
  EXPECT_NE(error_of([] { json_schema_to_gbnf({{"type", "number"}, {"maximum", 1.5}}); }).find("'maximum'"),
            std::string::npos);
  EXPECT_NE(error_of([] { json_schema_to_gbnf({{"$ref", "http://x/y"}}); }).find("http://x/y"), std::string::npos);
  EXPECT_NE(error_of([] { json_schema_to_gbnf({{"$ref", "#/$defs/missing"}}); }).find("not found"), std::string::npos);
  // Unknown keywords deep inside are found too.
  EXPECT_NE(error_of([] {
              json_schema_to_gbnf(json::parse(R"({"properties": {"a": {"items": {"type": "string", "pattern": "x"}}}})"));
            }).find("'pattern'"),
            std::string::npos);
}

// Schemas whose grammar would explode are refused by their bounds, before
// anything is expanded.
TEST(JsonSchema, ExplosionRefused) {
  EXPECT_NE(error_of([] { json_schema_to_gbnf({{"type", "array"}, {"minItems", 100000}}); }).find("minItems"),
            std::string::npos);
  EXPECT_NE(error_of([] { json_schema_to_gbnf({{"type", "string"}, {"maxLength", 1000000}}); }).find("maxLength"),
            std::string::npos);
  json deep = {{"type", "integer"}};
  for (int i = 0; i < 1000; ++i) deep = {{"type", "array"}, {"items", deep}};
  EXPECT_NE(error_of([&] { json_schema_to_gbnf(deep); }).find("nested deeper"), std::string::npos);
  // Many bounded repetitions, each allowed, add up past the budget.
  json wide = {{"type", "object"}, {"properties", json::object()}};
  for (int i = 0; i < 40; ++i) wide["properties"]["p" + std::to_string(i)] = {{"type", "string"}, {"maxLength", 9000}};
  EXPECT_NE(error_of([&] { json_schema_to_gbnf(wide); }).find("too large"), std::string::npos);
}

TEST(JsonSchema, RootPrefixKeepsGrammarsApart) {
  const std::string a = json_schema_to_gbnf({{"type", "object"}, {"properties", {{"x", {{"type", "integer"}}}}}}, "tool-a");
  const std::string b = json_schema_to_gbnf({{"type", "array"}, {"items", {{"type", "string"}}}}, "tool-b");
  for (const std::string& text : {a, b}) {
    for (size_t at = 0; at < text.size(); at = text.find('\n', at) + 1) {
      if (at >= text.size()) break;
      EXPECT_EQ(text.compare(at, 5, "tool-"), 0) << text.substr(at, text.find('\n', at) - at);
    }
  }
  auto g = parse_gbnf("root ::= tool-a | tool-b\n" + a + b);
  EXPECT_TRUE(matches(g, R"({"x": 1})"));
  EXPECT_TRUE(matches(g, R"(["s"])"));
  EXPECT_FALSE(matches(g, R"({"x": "s"})"));
}

}  // namespace
}  // namespace parley::grammar
