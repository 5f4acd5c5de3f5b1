#include "chat/jinja_operators.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace parley::chat::jinja {
namespace {

// a op b with __builtin_{add,sub,mul}_overflow, failing on overflow.
template <typename Op>
int64_t checked(Op op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op(a, b, &r)) fail("integer overflow");
  return r;
}

int64_t int_power(int64_t base, int64_t exp) {  // by squaring
  int64_t result = 1;
  while (exp > 0) {
    if ((exp & 1) && __builtin_mul_overflow(result, base, &result)) fail("integer overflow");
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) fail("integer overflow");
  }
  return result;
}

// Python's float floor division: the floor of the exact quotient, which can
// differ from floor(x / y) after rounding (1 // 0.1 is 9.0).
double floor_divide(double x, double y) {
  double mod = std::fmod(x, y);
  double div = (x - mod) / y;
  if (mod != 0 && (y < 0) != (mod < 0)) div -= 1.0;
  if (div == 0) return std::copysign(0.0, x / y);
  const double floored = std::floor(div);
  return div - floored > 0.5 ? floored + 1.0 : floored;
}

Value float_op(std::string_view op, double x, double y) {
  if (op == "+") return Value::number(x + y);
  if (op == "-") return Value::number(x - y);
  if (op == "*") return Value::number(x * y);
  if (op == "**") {
    const double r = std::pow(x, y);
    if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) fail("numerical result out of range");
    return Value::number(r);
  }
  if (y == 0) fail("float division by zero");
  if (op == "//") return Value::number(floor_divide(x, y));
  const double r = std::fmod(x, y);
  return Value::number(r != 0 && (r < 0) != (y < 0) ? r + y : r);
}

Value integer_op(std::string_view op, int64_t x, int64_t y) {
  const auto add = [](int64_t a, int64_t b, int64_t* r) { return __builtin_add_overflow(a, b, r); };
  const auto sub = [](int64_t a, int64_t b, int64_t* r) { return __builtin_sub_overflow(a, b, r); };
  const auto mul = [](int64_t a, int64_t b, int64_t* r) { return __builtin_mul_overflow(a, b, r); };
  if (op == "+") return Value::integer(checked(add, x, y));
  if (op == "-") return Value::integer(checked(sub, x, y));
  if (op == "*") return Value::integer(checked(mul, x, y));
  if (op == "**") return y < 0 ? float_op(op, double(x), double(y)) : Value::integer(int_power(x, y));
  if (y == 0) fail("integer division or modulo by zero");
  if (x == std::numeric_limits<int64_t>::min() && y == -1) fail("integer overflow");
  if (op == "//") return Value::integer(x / y - ((x % y != 0 && (x < 0) != (y < 0)) ? 1 : 0));
  const int64_t r = x % y;  // Python's % takes the divisor's sign
  return Value::integer(r != 0 && (r < 0) != (y < 0) ? r + y : r);
}

// "ab" * 3, [1] * 3 (and 3 * "ab").
Value repeat(const Value& seq, const Value& times) {
  if (times.kind() != Value::Kind::Int && times.kind() != Value::Kind::Bool) {
    fail("can't multiply sequence by non-int of type '" + type_name(times) + "'");
  }
  const int64_t n = std::max<int64_t>(times.as_int(), 0);
  if (seq.is_string()) {
    check_size(seq.as_text().size() * size_t(n));
    Text out;
    for (int64_t i = 0; i < n; ++i) out.append(seq.as_text());
    return Value::string(std::move(out));
  }
  check_size(seq.as_list().size() * size_t(n));
  List out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
  return Value::list(std::move(out));
}

bool is_sequence(const Value& v) { return v.is_string() || v.kind() == Value::Kind::List; }

}  // namespace

Value binary_op(std::string_view op, const Value& a, const Value& b) {
  if (op == "~") {
    Text t = to_text(a);
    t.append(to_text(b));
    check_size(t.size());
    return Value::string(std::move(t));
  }
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (a.is_number() && b.is_number()) {
    if (op == "/") {
      if (b.as_double() == 0) fail("division by zero");
      return Value::number(a.as_double() / b.as_double());
    }
    if (a.kind() == Value::Kind::Float || b.kind() == Value::Kind::Float)
      return float_op(op, a.as_double(), b.as_double());
    return integer_op(op, a.as_int(), b.as_int());
  }
  if (op == "+" && a.is_string() && b.is_string()) {
    check_size(a.as_text().size() + b.as_text().size());
    Text t = a.as_text();
    t.append(b.as_text());
    return Value::string(std::move(t));
  }
  if (op == "+" && a.kind() == Value::Kind::List && b.kind() == Value::Kind::List) {
    List out = a.as_list();
    out.insert(out.end(), b.as_list().begin(), b.as_list().end());
    return Value::list(std::move(out));
  }
  if (op == "*" && is_sequence(a) && b.is_number()) return repeat(a, b);
  if (op == "*" && a.is_number() && is_sequence(b)) return repeat(b, a);
  fail("unsupported operand type(s) for " + std::string(op) + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

Value unary_op(std::string_view op, const Value& v) {
  if (v.is_undefined()) fail_undefined(v);
  if (!v.is_number()) fail("bad operand type for unary " + std::string(op) + ": '" + type_name(v) + "'");
  if (v.kind() == Value::Kind::Float) return Value::number(op == "-" ? -v.as_double() : v.as_double());
  if (op == "+") return Value::integer(v.as_int());
  if (v.as_int() == std::numeric_limits<int64_t>::min()) fail("integer overflow");
  return Value::integer(-v.as_int());
}

}  // namespace parley::chat::jinja
