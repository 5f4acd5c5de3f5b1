// Jinja's filters (x|name(args)), with transformers' tojson.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>

#include "chat/jinja_args.h"
#include "chat/jinja_builtins.h"
#include "chat/jinja_strings.h"

namespace parley::chat::jinja {
namespace {

Value f_abs(const Value& v, const Args&) {
  if (!v.is_number()) fail("bad operand type for abs(): '" + type_name(v) + "'");
  if (v.kind() == Value::Kind::Float) return Value::number(std::fabs(v.as_double()));
  if (v.as_int() == INT64_MIN) fail("integer overflow");
  return Value::integer(std::llabs(v.as_int()));
}

Value f_capitalize(const Value& v, const Args&) {
  const Text t = to_text(v);
  return Value::string(t.with_same_marks(capitalize(t.str())));
}

Value f_lower(const Value& v, const Args&) {
  const Text t = to_text(v);
  return Value::string(t.with_same_marks(lower(t.str())));
}

Value f_upper(const Value& v, const Args&) {
  const Text t = to_text(v);
  return Value::string(t.with_same_marks(upper(t.str())));
}

Value f_title(const Value& v, const Args&) {
  const Text t = to_text(v);
  return Value::string(t.with_same_marks(title_words(t.str())));
}

Value f_default(const Value& v, const Args& a) {
  const Value* dflt = a.get(0, "default_value");
  if (v.is_undefined() || (opt_bool(a, 1, "boolean", false) && !truthy(v))) return dflt ? *dflt : Value::string("");
  return v;
}

Value f_first(const Value& v, const Args&) {
  const List items = iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value f_last(const Value& v, const Args&) {
  const List items = iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

// Python's int() / float() of a string: surrounding whitespace and digit
// separators allowed, nothing else.
std::string number_text(const std::string& s) {
  const Text trimmed = strip(Text(s), true, true);
  std::string out;
  for (char c : trimmed.str()) {
    if (c != '_') out += c;
  }
  return out;
}

std::optional<int64_t> parse_int(const std::string& s, int base) {
  const std::string digits = number_text(s);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(digits.c_str(), &end, base);
  if (digits.empty() || end != digits.c_str() + digits.size() || errno == ERANGE) return std::nullopt;
  return int64_t(v);
}

std::optional<double> parse_float(const std::string& s) {
  const std::string digits = number_text(s);
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (digits.empty() || end != digits.c_str() + digits.size()) return std::nullopt;
  return v;
}

// A float truncated to an integer, when it fits.
std::optional<int64_t> truncate(double d) {
  d = std::trunc(d);
  if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return std::nullopt;
  return int64_t(d);
}

Value f_float(const Value& v, const Args& a) {
  if (v.is_undefined()) fail_undefined(v);
  const Value* dflt = a.get(0, "default");
  if (v.is_number()) return Value::number(v.as_double());
  if (v.is_string()) {
    if (const auto d = parse_float(v.as_text().str())) return Value::number(*d);
  }
  return dflt ? *dflt : Value::number(0.0);
}

Value f_int(const Value& v, const Args& a) {
  if (v.is_undefined()) fail_undefined(v);
  const Value* dflt = a.get(0, "default");
  std::optional<int64_t> i;
  if (v.kind() == Value::Kind::Float) {
    i = truncate(v.as_double());
  } else if (v.is_number()) {
    i = v.as_int();
  } else if (v.is_string()) {  // "42", else "4.2" as a float
    i = parse_int(v.as_text().str(), int(opt_int(a, 1, "base", 10)));
    if (!i) {
      if (const auto d = parse_float(v.as_text().str())) i = truncate(*d);
    }
  }
  return i ? Value::integer(*i) : dflt ? *dflt : Value::integer(0);
}

Value f_indent(const Value& v, const Args& a) {
  if (v.is_undefined()) fail_undefined(v);
  const Value* width = a.get(0, "width");
  std::string indent;  // a string, or that many spaces
  if (width && width->is_string()) {
    indent = width->as_text().str();
  } else {
    const int64_t spaces = std::max<int64_t>(opt_int(a, 0, "width", 4), 0);
    check_size(size_t(spaces));
    indent.assign(size_t(spaces), ' ');
  }
  const bool first = opt_bool(a, 1, "first", false), blank = opt_bool(a, 2, "blank", false);
  const std::string newline = "\n";
  const std::vector<Text> lines = split(to_text(v), &newline, -1);
  Text out;
  if (first) out.append(indent);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out.append(newline);
    if (i && (blank || !lines[i].empty())) out.append(indent);  // empty lines stay empty unless `blank`
    out.append(lines[i]);
  }
  return Value::string(std::move(out));
}

Value f_items(const Value& v, const Args&) { return dict_items(v); }

Value f_join(const Value& v, const Args& a) {
  const Value* sep = a.get(0, "d");
  const std::string* attribute = opt_string(a, 1, "attribute");
  List items = iterate(v);
  if (attribute) {
    for (Value& x : items) x = get_path(x, *attribute);
  }
  return Value::string(join_text(items, sep ? to_text(*sep) : Text()));
}

Value f_length(const Value& v, const Args&) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
      return Value::integer(0);
    case Value::Kind::String:
      return Value::integer(int64_t(char_count(v.as_text().str())));
    case Value::Kind::List:
      return Value::integer(int64_t(v.as_list().size()));
    case Value::Kind::Dict:
      return Value::integer(int64_t(v.as_dict().items.size()));
    default:
      fail("object of type '" + type_name(v) + "' has no len()");
  }
}

Value f_list(const Value& v, const Args&) { return Value::list(iterate(v)); }

// map and select: Jinja visits the items of a true value only (so map(false) is []).
List items_if_true(const Value& v) { return truthy(v) ? iterate(v) : List(); }

Value f_map(const Value& v, const Args& a) {
  List items = items_if_true(v);
  if (const Value* attribute_arg = named_arg(a, "attribute")) {
    const std::string attribute = str(*attribute_arg);
    const Value* dflt = named_arg(a, "default");
    for (Value& x : items) {
      x = get_path(x, attribute);
      if (x.is_undefined() && dflt) x = *dflt;
    }
    return Value::list(std::move(items));
  }
  const std::string name = str(required(a, 0, "filter"));
  const FilterFn filter = find_filter(name);
  if (!filter) fail("unknown filter '" + name + "'");
  const Args rest = rest_of(a, 1);
  for (Value& x : items) x = filter(x, rest);
  return Value::list(std::move(items));
}

Value f_replace(const Value& v, const Args& a) {
  return Value::string(
      replace(to_text(v), str(required(a, 0, "old")), to_text(required(a, 1, "new")), opt_int(a, 2, "count", -1)));
}

Value f_reverse(const Value& v, const Args&) {
  if (v.is_string()) return Value::string(slice(v.as_text(), std::nullopt, std::nullopt, -1));
  List items = iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}

Value f_safe(const Value& v, const Args&) { return v; }

// select / reject / selectattr / rejectattr: keep the items whose (attribute's)
// test result is `keep`; with no test named, their truth.
Value select_items(const Value& v, const Args& a, bool by_attribute, bool keep) {
  const std::string attribute = by_attribute ? str(required(a, 0, "attribute")) : "";
  const size_t test_at = by_attribute ? 1 : 0;
  const Value* test_name = a.get(test_at, "test");
  TestFn test = nullptr;
  if (test_name) {
    test = find_test(str(*test_name));
    if (!test) fail("unknown test '" + str(*test_name) + "'");
  }
  Args test_args = rest_of(a, test_at + 1);
  test_args.named.clear();
  List out;
  for (const Value& item : items_if_true(v)) {
    const Value x = by_attribute ? get_path(item, attribute) : item;
    if ((test ? test(x, test_args) : truthy(x)) == keep) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value f_select(const Value& v, const Args& a) { return select_items(v, a, false, true); }
Value f_reject(const Value& v, const Args& a) { return select_items(v, a, false, false); }
Value f_selectattr(const Value& v, const Args& a) { return select_items(v, a, true, true); }
Value f_rejectattr(const Value& v, const Args& a) { return select_items(v, a, true, false); }

// The key sort and unique compare by: an attribute, lower-cased unless case-sensitive.
Value sort_key(const Value& item, const std::string* attribute, bool case_sensitive) {
  Value k = attribute ? get_path(item, *attribute) : item;
  return k.is_string() && !case_sensitive ? Value::string(lower(k.as_text().str())) : k;
}

Value f_sort(const Value& v, const Args& a) {
  const bool reverse = opt_bool(a, 0, "reverse", false), case_sensitive = opt_bool(a, 1, "case_sensitive", false);
  const std::string* attribute = opt_string(a, 2, "attribute");
  std::vector<std::pair<Value, Value>> keyed;
  for (const Value& x : iterate(v)) keyed.emplace_back(sort_key(x, attribute, case_sensitive), x);
  std::stable_sort(keyed.begin(), keyed.end(), [reverse](const auto& x, const auto& y) {
    return reverse ? compare(y.first, x.first, "<") < 0 : compare(x.first, y.first, "<") < 0;
  });
  List out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return Value::list(std::move(out));
}

Value f_unique(const Value& v, const Args& a) {
  const bool case_sensitive = opt_bool(a, 0, "case_sensitive", false);
  const std::string* attribute = opt_string(a, 1, "attribute");
  List out, seen;
  for (const Value& x : iterate(v)) {
    Value k = sort_key(x, attribute, case_sensitive);
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, k); })) {
      seen.push_back(std::move(k));
      out.push_back(x);
    }
  }
  return Value::list(std::move(out));
}

Value f_string(const Value& v, const Args&) { return Value::string(to_text(v)); }

// transformers' tojson: json.dumps(x, ensure_ascii=False, indent, separators, sort_keys).
Value f_tojson(const Value& v, const Args& a) {
  JsonStyle style = default_json_style(int(opt_int(a, 1, "indent", -1)));
  style.ensure_ascii = opt_bool(a, 0, "ensure_ascii", false);
  style.sort_keys = opt_bool(a, 3, "sort_keys", false);
  if (const Value* sep = a.get(2, "separators"); sep && !sep->is_none()) {
    if (sep->kind() != Value::Kind::List || sep->as_list().size() != 2) fail("separators must be a pair of strings");
    style.item_separator = str(sep->as_list()[0]);
    style.key_separator = str(sep->as_list()[1]);
  }
  return Value::string(Text(to_json(v, style), has_user_bytes(v)));
}

Value f_trim(const Value& v, const Args& a) {
  return Value::string(strip(to_text(v), true, true, opt_string(a, 0, "chars")));
}

struct NamedFilter {
  std::string_view name;
  FilterFn fn;
};
constexpr NamedFilter kFilters[] = {
    {"abs", f_abs},
    {"capitalize", f_capitalize},
    {"count", f_length},
    {"d", f_default},
    {"default", f_default},
    {"first", f_first},
    {"float", f_float},
    {"indent", f_indent},
    {"int", f_int},
    {"items", f_items},
    {"join", f_join},
    {"last", f_last},
    {"length", f_length},
    {"list", f_list},
    {"lower", f_lower},
    {"map", f_map},
    {"reject", f_reject},
    {"rejectattr", f_rejectattr},
    {"replace", f_replace},
    {"reverse", f_reverse},
    {"safe", f_safe},
    {"select", f_select},
    {"selectattr", f_selectattr},
    {"sort", f_sort},
    {"string", f_string},
    {"title", f_title},
    {"tojson", f_tojson},
    {"trim", f_trim},
    {"unique", f_unique},
    {"upper", f_upper},
};

}  // namespace

FilterFn find_filter(std::string_view name) {
  for (const NamedFilter& f : kFilters) {
    if (f.name == name) return f.fn;
  }
  return nullptr;
}

}  // namespace parley::chat::jinja
