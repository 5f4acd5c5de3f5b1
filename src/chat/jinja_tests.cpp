// Jinja's tests (x is name(args)).
#include <algorithm>

#include "chat/jinja_args.h"
#include "chat/jinja_builtins.h"
#include "chat/jinja_operators.h"

namespace parley::chat::jinja {
namespace {

bool t_defined(const Value& v, const Args&) { return !v.is_undefined(); }
bool t_undefined(const Value& v, const Args&) { return v.is_undefined(); }
bool t_none(const Value& v, const Args&) { return v.is_none(); }
bool t_boolean(const Value& v, const Args&) { return v.kind() == Value::Kind::Bool; }
bool t_true(const Value& v, const Args&) { return v.kind() == Value::Kind::Bool && v.as_bool(); }
bool t_false(const Value& v, const Args&) { return v.kind() == Value::Kind::Bool && !v.as_bool(); }
bool t_integer(const Value& v, const Args&) { return v.kind() == Value::Kind::Int; }
bool t_float(const Value& v, const Args&) { return v.kind() == Value::Kind::Float; }
bool t_number(const Value& v, const Args&) { return v.is_number(); }
bool t_string(const Value& v, const Args&) { return v.is_string(); }
bool t_mapping(const Value& v, const Args&) { return v.kind() == Value::Kind::Dict && !v.as_dict().is_namespace; }
bool t_callable(const Value& v, const Args&) { return v.kind() == Value::Kind::Function; }
bool t_iterable(const Value& v, const Args&) {  // Jinja's undefined is iterable (and empty)
  return v.is_string() || v.is_undefined() || v.kind() == Value::Kind::List || t_mapping(v, {});
}
bool t_eq(const Value& v, const Args& a) { return equals(v, required(a, 0, "other")); }
bool t_ne(const Value& v, const Args& a) { return !equals(v, required(a, 0, "other")); }
bool t_lt(const Value& v, const Args& a) { return compare(v, required(a, 0, "other"), "<") < 0; }
bool t_le(const Value& v, const Args& a) { return compare(v, required(a, 0, "other"), "<=") <= 0; }
bool t_gt(const Value& v, const Args& a) { return compare(v, required(a, 0, "other"), ">") > 0; }
bool t_ge(const Value& v, const Args& a) { return compare(v, required(a, 0, "other"), ">=") >= 0; }
bool t_in(const Value& v, const Args& a) { return contains(required(a, 0, "seq"), v); }

// x % n with Python's % (numbers of any kind) equal to `rest`.
bool remainder_is(const Value& v, const Value& n, int64_t rest) {
  return equals(binary_op("%", v, n), Value::integer(rest));
}
bool t_even(const Value& v, const Args&) { return remainder_is(v, Value::integer(2), 0); }
bool t_odd(const Value& v, const Args&) { return remainder_is(v, Value::integer(2), 1); }
bool t_divisibleby(const Value& v, const Args& a) { return remainder_is(v, required(a, 0, "num"), 0); }

// str(x).islower() / isupper(): some cased letter, and none of the other case.
bool has_case(const Value& v, bool want_lower) {
  const std::string s = to_text(v).str();
  const auto is_lower = [](char c) { return c >= 'a' && c <= 'z'; };
  const auto is_upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  const bool any_wanted = std::any_of(s.begin(), s.end(), want_lower ? is_lower : is_upper);
  return any_wanted && std::none_of(s.begin(), s.end(), want_lower ? is_upper : is_lower);
}
bool t_lower(const Value& v, const Args&) { return has_case(v, true); }
bool t_upper(const Value& v, const Args&) { return has_case(v, false); }

struct NamedTest {
  std::string_view name;
  TestFn fn;
};
constexpr NamedTest kTests[] = {
    {"boolean", t_boolean},
    {"callable", t_callable},
    {"defined", t_defined},
    {"divisibleby", t_divisibleby},
    {"eq", t_eq},
    {"equalto", t_eq},
    {"even", t_even},
    {"false", t_false},
    {"float", t_float},
    {"ge", t_ge},
    {"greaterthan", t_gt},
    {"gt", t_gt},
    {"in", t_in},
    {"integer", t_integer},
    {"iterable", t_iterable},
    {"le", t_le},
    {"lessthan", t_lt},
    {"lower", t_lower},
    {"lt", t_lt},
    {"mapping", t_mapping},
    {"ne", t_ne},
    {"none", t_none},
    {"number", t_number},
    {"odd", t_odd},
    {"sequence", t_iterable},
    {"string", t_string},
    {"true", t_true},
    {"undefined", t_undefined},
    {"upper", t_upper},
};

}  // namespace

TestFn find_test(std::string_view name) {
  for (const NamedTest& t : kTests) {
    if (t.name == name) return t.fn;
  }
  return nullptr;
}

}  // namespace parley::chat::jinja
