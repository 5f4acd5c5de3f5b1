// JSON Schema -> GBNF.
//
// Supported: type (and type arrays), properties, required, additionalProperties,
// enum, const, items, prefixItems, minItems, maxItems, minLength, maxLength,
// format (date, time, date-time, uuid), integer minimum / maximum /
// exclusiveMinimum / exclusiveMaximum, number minimum 0, $ref to #,
// #/$defs/X and #/definitions/X (recursion allowed), anyOf, oneOf (as anyOf),
// allOf of object schemas; annotations are ignored. Any other keyword is
// refused with a parley::Error naming it, so that no output is promised to
// satisfy a constraint the grammar does not enforce.
//
// Choices where JSON Schema allows more than a model should write:
// - additionalProperties absent: no properties beyond `properties` are
//   generated (the schema allows them, but a finite, predictable output is
//   what a caller giving properties wants); true or a schema: extra
//   properties with any string key (one could repeat a declared key).
// - prefixItems without items: no items after the prefix.
// - Strings count an escape sequence as one character for min/maxLength.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_rules.h"
#include "engine/grammar/json_rules.h"
#include "engine/grammar/json_schema_parts.h"
#include "util/error.h"

namespace parley::grammar {

namespace {

constexpr int kMaxSchemaDepth = 64;
// Repetition counts summed over the schema: what {m,n} expands to in the parser.
constexpr int64_t kMaxExpansion = 200000;

const std::set<std::string, std::less<>> kAnnotations = {
    "description", "title", "$schema", "$id", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"};
const std::set<std::string, std::less<>> kKeywords = {
    "type",      "properties", "required",  "additionalProperties", "enum",    "const",   "items",
    "prefixItems", "minItems", "maxItems",  "minLength",            "maxLength", "format", "minimum",
    "maximum",   "exclusiveMinimum", "exclusiveMaximum", "$ref",    "$defs",   "definitions", "anyOf",
    "oneOf",     "allOf"};
const char* const kGenericRules[] = {"value", "object", "array", "string", "char",
                                     "number", "integer", "boolean", "null", "ws"};

[[noreturn]] void unsupported(const std::string& keyword, const std::string& detail = "") {
  throw Error("JSON schema keyword '" + keyword + "' is not supported" + (detail.empty() ? "" : " (" + detail + ")"));
}

// A property name as part of a rule name: [a-zA-Z0-9-], at most 40 long.
std::string name_part(const std::string& s) {
  std::string out;
  for (const char c : s.substr(0, 40)) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return out.empty() ? "x" : out;
}

std::string repeat_suffix(int64_t lo, std::optional<int64_t> hi) {
  if (!hi) return lo == 0 ? "*" : "{" + std::to_string(lo) + ",}";
  return "{" + std::to_string(lo) + "," + std::to_string(*hi) + "}";
}

template <typename Json>
class SchemaConverter {
 public:
  SchemaConverter(const Json& schema, std::string_view root) : top_(schema), root_(root) {
    if (root_.empty() || !std::all_of(root_.begin(), root_.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
        })) {
      throw Error("grammar root name '" + root_ + "' must be letters, digits and '-'");
    }
    used_.insert(root_);
    for (const char* g : kGenericRules) used_.insert(root_ + "-" + g);
  }

  std::string convert() {
    define(root_, expression(top_, root_, 0));
    if (generic_used_) add_text(json_value_rules(root_ + "-"));
    return text_;
  }

 private:
  void add_text(const std::string& text) {
    text_ += text;
    if (text_.size() > kMaxGrammarBytes) throw Error("JSON schema too large: its grammar exceeds 1 MiB");
  }

  void define(const std::string& name, const std::string& body) { add_text(name + " ::= " + body + "\n"); }

  std::string unique(const std::string& base) {
    std::string name = base;
    for (int i = 2; used_.count(name) != 0; ++i) name = base + "-" + std::to_string(i);
    used_.insert(name);
    return name;
  }

  std::string generic(const char* rule) {
    generic_used_ = true;
    return root_ + "-" + rule;
  }

  // A new rule matching the schema; returns its name.
  std::string rule_for(const Json& schema, const std::string& base, int depth) {
    const std::string name = unique(base);
    define(name, expression(schema, name, depth));
    return name;
  }

  void expand(int64_t count) {
    expansion_ += count;
    if (expansion_ > kMaxExpansion) throw Error("JSON schema too large: its repetitions expand past the grammar limits");
  }

  static void check_keywords(const Json& s) {
    for (auto it = s.begin(); it != s.end(); ++it) {
      if (kKeywords.count(it.key()) == 0 && kAnnotations.count(it.key()) == 0) unsupported(it.key());
    }
  }

  // Fails when the schema has keywords besides `keyword`, annotations and definitions.
  static void check_alone(const Json& s, const std::string& keyword) {
    for (auto it = s.begin(); it != s.end(); ++it) {
      const std::string& k = it.key();
      if (k != keyword && k != "$defs" && k != "definitions" && kAnnotations.count(k) == 0) {
        unsupported(k, "next to '" + keyword + "'");
      }
    }
  }

  std::string expression(const Json& s, const std::string& name, int depth) {
    if (depth > kMaxSchemaDepth) throw Error("JSON schema nested deeper than " + std::to_string(kMaxSchemaDepth));
    if (s.is_boolean()) {
      if (!s.template get<bool>()) throw Error("JSON schema false (matching nothing) is not supported");
      return generic("value");
    }
    if (!s.is_object()) throw Error("JSON schema must be an object or a boolean");
    check_keywords(s);
    if (s.contains("$ref")) {
      check_alone(s, "$ref");
      return ref_rule(s["$ref"], depth);
    }
    if (s.contains("allOf")) return expression(merge_all_of(s), name, depth + 1);
    for (const char* k : {"anyOf", "oneOf"}) {
      if (s.contains(k)) return any_of(s, k, name, depth);
    }
    if (s.contains("const")) return gbnf_literal(s["const"].dump());
    if (s.contains("enum")) return enumeration(s["enum"]);
    const std::vector<std::string> types = types_of(s);
    if (types.empty()) return generic("value");
    std::string out;
    for (const std::string& t : types) {
      const std::string e = typed(s, t, types.size() > 1 ? name + "-" + t : name, depth);
      out += types.size() > 1 ? (out.empty() ? "( " : " | ") + e : e;
    }
    return types.size() > 1 ? out + " )" : out;
  }

  std::vector<std::string> types_of(const Json& s) {
    if (s.contains("type")) {
      const Json& t = s["type"];
      if (t.is_string()) return {t.template get<std::string>()};
      if (!t.is_array() || t.empty()) throw Error("JSON schema 'type' must be a string or a non-empty array");
      std::vector<std::string> types;
      for (const auto& e : t) {
        if (!e.is_string()) throw Error("JSON schema 'type' must be a string or a non-empty array");
        types.push_back(e.template get<std::string>());
      }
      return types;
    }
    // No type: what the keywords given constrain (JSON Schema applies them to
    // that type only; other types would match unconstrained, we generate none).
    for (const char* k : {"properties", "required", "additionalProperties"}) {
      if (s.contains(k)) return {"object"};
    }
    for (const char* k : {"items", "prefixItems", "minItems", "maxItems"}) {
      if (s.contains(k)) return {"array"};
    }
    for (const char* k : {"minLength", "maxLength", "format"}) {
      if (s.contains(k)) return {"string"};
    }
    for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
      if (s.contains(k)) return {"number"};
    }
    return {};
  }

  std::string typed(const Json& s, const std::string& type, const std::string& name, int depth) {
    if (type == "string") return string_expression(s);
    if (type == "number") return number_expression(s);
    if (type == "integer") return integer_expression(s);
    if (type == "boolean") return generic("boolean");
    if (type == "null") return generic("null");
    if (type == "object") return object_expression(s, name, depth);
    if (type == "array") return array_expression(s, name, depth);
    throw Error("JSON schema type '" + type + "' is not supported");
  }

  std::string any_of(const Json& s, const char* keyword, const std::string& name, int depth) {
    check_alone(s, keyword);
    const Json& subs = s[keyword];
    if (!subs.is_array() || subs.empty()) throw Error(std::string("JSON schema '") + keyword + "' must be a non-empty array");
    std::string out = "(";
    for (size_t i = 0; i < subs.size(); ++i) {
      out += (i ? " | " : " ") + rule_for(subs[i], name + "-" + std::to_string(i), depth + 1);
    }
    return out + " )";
  }

  std::string enumeration(const Json& values) {
    if (!values.is_array() || values.empty()) throw Error("JSON schema 'enum' must be a non-empty array");
    std::string out = "(";
    for (size_t i = 0; i < values.size(); ++i) out += (i ? " | " : " ") + gbnf_literal(values[i].dump());
    return out + " )";
  }

  const Json& resolve(const Json& ref) const {
    if (!ref.is_string()) throw Error("JSON schema '$ref' must be a string");
    const std::string r = ref.template get<std::string>();
    if (r == "#") return top_;
    for (const char* container : {"$defs", "definitions"}) {
      const std::string prefix = std::string("#/") + container + "/";
      if (r.rfind(prefix, 0) != 0) continue;
      std::string key = r.substr(prefix.size());  // a JSON pointer token: ~1 is '/', ~0 is '~'
      for (size_t at; (at = key.find("~1")) != std::string::npos;) key.replace(at, 2, "/");
      for (size_t at; (at = key.find("~0")) != std::string::npos;) key.replace(at, 2, "~");
      if (!top_.is_object() || !top_.contains(container) || !top_[container].contains(key)) {
        throw Error("JSON schema $ref '" + r + "' not found");
      }
      return top_[container][key];
    }
    throw Error("JSON schema $ref '" + r + "' is not supported (only #, #/$defs/... and #/definitions/... are)");
  }

  // A rule per referenced schema, named before its body is built so that
  // recursive references find it.
  std::string ref_rule(const Json& ref, int depth) {
    const Json& target = resolve(ref);
    if (&target == &top_) return root_;
    const std::string r = ref.template get<std::string>();
    auto it = refs_.find(r);
    if (it != refs_.end()) return it->second;
    const std::string name = unique(root_ + "-" + name_part(r.substr(r.rfind('/') + 1)));
    refs_.emplace(r, name);
    define(name, expression(target, name, depth + 1));
    return name;
  }

  // allOf of object schemas (after $refs) as one object schema.
  Json merge_all_of(const Json& s) {
    const Json& subs = s["allOf"];
    if (!subs.is_array() || subs.empty()) throw Error("JSON schema 'allOf' must be a non-empty array");
    Json merged = Json::object();
    Json properties = Json::object();
    Json required = Json::array();
    const auto absorb = [&](const Json& part) {
      for (auto it = part.begin(); it != part.end(); ++it) {
        const std::string& k = it.key();
        if (k == "properties") {
          for (auto p = it->begin(); p != it->end(); ++p) {
            if (properties.contains(p.key())) unsupported("allOf", "property '" + p.key() + "' given twice");
            properties[p.key()] = *p;
          }
        } else if (k == "required") {
          for (const auto& r : *it) required.push_back(r);
        } else if (k == "type") {
          if (*it != "object") unsupported("allOf", "only of object schemas");
        } else if (k == "additionalProperties") {
          merged[k] = *it;
        } else if (k != "allOf" && k != "$defs" && k != "definitions" && kAnnotations.count(k) == 0) {
          unsupported("allOf", "only of object schemas with properties and required, not '" + k + "'");
        }
      }
    };
    absorb(s);
    for (const auto& sub : subs) {
      const Json& part = sub.is_object() && sub.contains("$ref") ? resolve(sub["$ref"]) : sub;
      if (!part.is_object()) unsupported("allOf", "only of object schemas");
      absorb(part);
    }
    merged["type"] = "object";
    merged["properties"] = properties;
    merged["required"] = required;
    return merged;
  }

  static std::optional<int64_t> count_keyword(const Json& s, const char* keyword) {
    if (!s.contains(keyword)) return std::nullopt;
    const Json& v = s[keyword];
    if (!v.is_number_integer() || v.template get<int64_t>() < 0) {
      throw Error(std::string("JSON schema '") + keyword + "' must be a non-negative integer");
    }
    const auto n = v.template get<int64_t>();
    if (n > kMaxRepetition) {
      throw Error(std::string("JSON schema '") + keyword + "' " + std::to_string(n) + " is over the limit of " +
                  std::to_string(kMaxRepetition));
    }
    return n;
  }

  std::string string_expression(const Json& s) {
    const std::string quote = "\"\\\"\"";
    if (s.contains("format")) {
      if (!s["format"].is_string()) throw Error("JSON schema 'format' must be a string");
      return quote + " " + string_format_gbnf(s["format"].template get<std::string>()) + " " + quote;
    }
    const int64_t min = count_keyword(s, "minLength").value_or(0);
    const std::optional<int64_t> max = count_keyword(s, "maxLength");
    if (max && *max < min) throw Error("JSON schema maxLength is below minLength");
    expand(max.value_or(min));
    return quote + " " + generic("char") + repeat_suffix(min, max) + " " + quote;
  }

  std::string number_expression(const Json& s) {
    for (const char* k : {"exclusiveMinimum", "maximum", "exclusiveMaximum"}) {
      if (s.contains(k)) unsupported(k, "for type number; type integer supports it");
    }
    if (!s.contains("minimum")) return generic("number");
    if (!s["minimum"].is_number() || s["minimum"].template get<double>() != 0.0) {
      unsupported("minimum", "for type number other than 0; type integer supports any");
    }
    return "( \"0\" | [1-9] [0-9]* ) ( \".\" [0-9]+ )? ( [eE] [-+]? [0-9]+ )?";
  }

  // A bound as an integer: the smallest (lower) or largest (upper) integer
  // the bound admits; exclusive bounds step past the value.
  static std::optional<int64_t> integer_bound(const Json& s, const char* keyword, bool lower, bool exclusive) {
    if (!s.contains(keyword)) return std::nullopt;
    const Json& v = s[keyword];
    if (v.is_boolean()) unsupported(keyword, "draft-4 boolean form");
    if (!v.is_number()) throw Error(std::string("JSON schema '") + keyword + "' must be a number");
    if (v.is_number_unsigned() && v.template get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      unsupported(keyword, "beyond 64-bit integers");
    }
    if (v.is_number_integer()) {
      const auto i = v.template get<int64_t>();
      if (!exclusive) return i;
      if (i == (lower ? INT64_MAX : INT64_MIN)) throw Error("JSON schema integer range is empty");
      return lower ? i + 1 : i - 1;
    }
    const double d = v.template get<double>();
    if (!(std::fabs(d) < 1e18)) unsupported(keyword, "beyond +-1e18");
    double b = lower ? std::ceil(d) : std::floor(d);
    if (exclusive && b == d) b += lower ? 1 : -1;
    return static_cast<int64_t>(b);
  }

  std::string integer_expression(const Json& s) {
    std::optional<int64_t> lo = integer_bound(s, "minimum", true, false);
    std::optional<int64_t> hi = integer_bound(s, "maximum", false, false);
    if (auto e = integer_bound(s, "exclusiveMinimum", true, true)) lo = lo ? std::max(*lo, *e) : *e;
    if (auto e = integer_bound(s, "exclusiveMaximum", false, true)) hi = hi ? std::min(*hi, *e) : *e;
    if (!lo && !hi) return generic("integer");
    if (lo && hi && *lo > *hi) throw Error("JSON schema integer range is empty");
    return integer_range_gbnf(lo, hi);
  }

  std::string object_expression(const Json& s, const std::string& name, int depth) {
    const std::string ws = generic("ws");
    static const Json kNone = Json::object();
    const Json& properties = s.contains("properties") ? s["properties"] : kNone;
    if (!properties.is_object()) throw Error("JSON schema 'properties' must be an object");
    std::set<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) throw Error("JSON schema 'required' must be an array");
      for (const auto& r : s["required"]) {
        if (!r.is_string()) throw Error("JSON schema 'required' must list strings");
        if (!properties.contains(r.template get<std::string>())) {
          unsupported("required", "'" + r.template get<std::string>() + "' is not in properties");
        }
        required.insert(r.template get<std::string>());
      }
    }
    std::vector<std::string> members;
    std::vector<bool> needed;
    for (auto it = properties.begin(); it != properties.end(); ++it) {
      const std::string value = rule_for(*it, name + "-" + name_part(it.key()), depth + 1);
      members.push_back(gbnf_literal(Json(it.key()).dump()) + " " + ws + " \":\" " + ws + " " + value + " " + ws);
      needed.push_back(required.count(it.key()) != 0);
    }
    std::string extra;  // a member beyond the properties, when allowed
    if (s.contains("additionalProperties") && s["additionalProperties"] != Json(false)) {
      const std::string value = rule_for(s["additionalProperties"], name + "-additional", depth + 1);
      extra = generic("string") + " " + ws + " \":\" " + ws + " " + value + " " + ws;
    }
    return "\"{\" " + ws + " " + members_expression(members, needed, extra, name) + "\"}\"";
  }

  // Members in order, the optional ones omissible, commas only between.
  // Built from the end: rest i matches members i.. after something was
  // written (each with its comma), first i the same when nothing was yet;
  // each is a rule so that the text stays linear in the number of members.
  std::string members_expression(const std::vector<std::string>& members, const std::vector<bool>& needed,
                                 const std::string& extra, const std::string& name) {
    const std::string ws = generic("ws");
    std::string rest = extra.empty() ? "" : "( \",\" " + ws + " " + extra + " )*";
    std::string first = extra.empty() ? "" : "( " + extra + " " + rest + " )?";
    for (size_t i = members.size(); i-- > 0;) {
      const std::string after = rest.empty() ? "" : " " + rest;
      const std::string with = members[i] + after;
      const std::string first_i = needed[i] ? with : first.empty() ? "( " + with + " )?" : "( " + with + " | " + first + " )";
      if (i == 0) return first_i + " ";
      const std::string comma = "\",\" " + ws + " " + members[i];
      rest = unique(name + "-rest");
      define(rest, (needed[i] ? comma : "( " + comma + " )?") + after);
      first = unique(name + "-first");
      define(first, first_i);
    }
    return first.empty() ? "" : first + " ";
  }

  std::string array_expression(const Json& s, const std::string& name, int depth) {
    const std::string ws = generic("ws");
    const int64_t min = count_keyword(s, "minItems").value_or(0);
    const std::optional<int64_t> max = count_keyword(s, "maxItems");
    if (max && *max < min) throw Error("JSON schema maxItems is below minItems");
    std::vector<std::string> prefix;
    if (s.contains("prefixItems")) {
      if (!s["prefixItems"].is_array()) throw Error("JSON schema 'prefixItems' must be an array");
      for (size_t i = 0; i < s["prefixItems"].size() && (!max || static_cast<int64_t>(i) < *max); ++i) {
        prefix.push_back(rule_for(s["prefixItems"][i], name + "-" + std::to_string(i), depth + 1));
      }
    }
    std::string item;
    if (s.contains("items") ? s["items"] != Json(false) : prefix.empty()) {
      item = s.contains("items") ? rule_for(s["items"], name + "-item", depth + 1) : generic("value");
    }
    const auto k = static_cast<int64_t>(prefix.size());
    if (item.empty() && min > k) throw Error("JSON schema array: minItems needs more items than the schema allows");
    std::string tail;  // the items after the prefix, each with its comma
    if (!item.empty() && (!max || *max > k)) {
      const int64_t lo = std::max<int64_t>(min - k, 0);
      const std::optional<int64_t> hi = max ? std::optional<int64_t>(*max - k) : std::nullopt;
      expand(hi.value_or(lo));
      tail = "( \",\" " + ws + " " + item + " " + ws + " )" + repeat_suffix(lo, hi);
    }
    if (prefix.empty()) {
      if (item.empty() || max == 0) return "\"[\" " + ws + " \"]\"";
      // The first item has no comma: one fewer of the tail.
      const int64_t lo = std::max<int64_t>(min - 1, 0);
      const std::optional<int64_t> hi = max ? std::optional<int64_t>(*max - 1) : std::nullopt;
      const std::string more = hi == 0 ? "" : " ( \",\" " + ws + " " + item + " " + ws + " )" + repeat_suffix(lo, hi);
      const std::string items = item + " " + ws + more;
      return "\"[\" " + ws + (min > 0 ? " " + items : " ( " + items + " )?") + " \"]\"";
    }
    for (int64_t i = k - 1; i >= 1; --i) {
      const std::string with = "\",\" " + ws + " " + prefix[static_cast<size_t>(i)] + " " + ws + (tail.empty() ? "" : " " + tail);
      const std::string t = unique(name + "-tail");
      define(t, i < min ? with : "( " + with + " )?");
      tail = t;
    }
    const std::string items = prefix[0] + " " + ws + (tail.empty() ? "" : " " + tail);
    return "\"[\" " + ws + (min > 0 ? " " + items : " ( " + items + " )?") + " \"]\"";
  }

  const Json& top_;
  std::string root_;
  std::string text_;
  std::set<std::string> used_;
  std::map<std::string, std::string> refs_;
  bool generic_used_ = false;
  int64_t expansion_ = 0;
};

}  // namespace

std::string json_schema_to_gbnf(const nlohmann::json& schema, std::string_view root) {
  return SchemaConverter<nlohmann::json>(schema, root).convert();
}

std::string json_schema_to_gbnf_ordered(const nlohmann::ordered_json& schema, std::string_view root) {
  return SchemaConverter<nlohmann::ordered_json>(schema, root).convert();
}

}  // namespace parley::grammar
