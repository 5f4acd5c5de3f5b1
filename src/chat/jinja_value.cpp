#include "chat/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat/jinja_strings.h"

namespace parley::chat::jinja {

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Dict::set(std::string_view key, Value v) {
  for (auto& [k, old] : items) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  items.emplace_back(std::string(key), std::move(v));
}

const Value* Args::get(size_t i, std::string_view name) const {
  if (i < positional.size()) return &positional[i];
  for (const auto& [k, v] : named) {
    if (k == name) return &v;
  }
  return nullptr;
}

Value Value::function(std::string name, std::function<Value(const Args&)> call) {
  return Value(std::make_shared<const Function>(Function{std::move(name), std::move(call)}));
}

Value Value::list(List items) {
  Value v(std::make_shared<const List>(std::move(items)));
  for (const Value& x : v.as_list()) v.contain(x);
  return v;
}

Value Value::dict(std::shared_ptr<Dict> d) {
  Value v(std::move(d));
  v.holds_namespace_ = v.as_dict().is_namespace;
  for (const auto& kv : v.as_dict().items) v.contain(kv.second);
  return v;
}

void Value::contain(const Value& child) {
  nesting_ = std::max(nesting_, child.nesting_ + 1);
  if (nesting_ > kMaxNesting) fail("values nested more than " + std::to_string(kMaxNesting) + " deep");
  holds_namespace_ = holds_namespace_ || child.holds_namespace_;
}

int64_t Value::as_int() const { return kind() == Kind::Bool ? int64_t(as_bool()) : std::get<int64_t>(data_); }

double Value::as_double() const { return kind() == Kind::Float ? std::get<double>(data_) : double(as_int()); }

void fail(const std::string& message) { throw EvalError(message); }

void fail_undefined(const Value& v) { fail(v.undefined_why().empty() ? "undefined value" : v.undefined_why()); }

void check_size(size_t size) {
  if (size > kMaxSize) fail("template output too large (over " + std::to_string(kMaxSize) + " bytes or items)");
}

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
      return "Undefined";
    case Value::Kind::None:
      return "NoneType";
    case Value::Kind::Bool:
      return "bool";
    case Value::Kind::Int:
      return "int";
    case Value::Kind::Float:
      return "float";
    case Value::Kind::String:
      return "str";
    case Value::Kind::List:
      return "list";
    case Value::Kind::Dict:
      return v.as_dict().is_namespace ? "Namespace" : "dict";
    case Value::Kind::Function:
      return "function";
  }
  return "?";
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None:
      return false;
    case Value::Kind::Bool:
      return v.as_bool();
    case Value::Kind::Int:
      return v.as_int() != 0;
    case Value::Kind::Float:
      return v.as_double() != 0;
    case Value::Kind::String:
      return !v.as_text().empty();
    case Value::Kind::List:
      return !v.as_list().empty();
    case Value::Kind::Dict:
      return v.as_dict().is_namespace || !v.as_dict().items.empty();
    case Value::Kind::Function:
      return true;
  }
  return false;
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {  // Python: True == 1 == 1.0
    if (a.kind() == Value::Kind::Float || b.kind() == Value::Kind::Float) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::String:
      return a.as_text().str() == b.as_text().str();
    case Value::Kind::List:
      return std::equal(a.as_list().begin(), a.as_list().end(), b.as_list().begin(), b.as_list().end(), equals);
    case Value::Kind::Dict: {
      const Dict &x = a.as_dict(), &y = b.as_dict();
      if (x.is_namespace || y.is_namespace) return &x == &y;
      if (x.items.size() != y.items.size()) return false;
      return std::all_of(x.items.begin(), x.items.end(), [&](const auto& kv) {
        const Value* other = y.find(kv.first);
        return other && equals(kv.second, *other);
      });
    }
    case Value::Kind::Function:
      return &a.as_function() == &b.as_function();
    default:
      return true;  // Undefined, None
  }
}

int compare(const Value& a, const Value& b, std::string_view op) {
  if (a.is_number() && b.is_number()) {
    const double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : (y < x ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) return a.as_text().str().compare(b.as_text().str());
  if (a.kind() == Value::Kind::List && b.kind() == Value::Kind::List) {
    const List &x = a.as_list(), &y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return compare(x[i], y[i], op);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  fail("'" + std::string(op) + "' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) +
       "'");
}

std::string format_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific).ptr;
  const std::string_view s(buf, size_t(end - buf));  // shortest round trip: "-1.25e+02"
  const size_t e = s.find('e');
  const bool negative = s[0] == '-';
  std::string digits;
  for (char c : s.substr(negative, e - negative)) {
    if (c != '.') digits += c;
  }
  int exp = 0;
  std::from_chars(s.data() + e + (s[e + 1] == '+' ? 2 : 1), s.data() + s.size(), exp);
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 16) {  // Python's repr switches to exponent notation here
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    char tail[16];
    std::snprintf(tail, sizeof tail, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return out + tail;
  }
  if (exp < 0) return out + "0." + std::string(size_t(-exp - 1), '0') + digits;
  if (digits.size() <= size_t(exp) + 1) digits.append(size_t(exp) + 1 - digits.size(), '0');
  const std::string frac = digits.substr(size_t(exp) + 1);
  return out + digits.substr(0, size_t(exp) + 1) + "." + (frac.empty() ? "0" : frac);
}

namespace {

std::string repr_string(const std::string& s) {
  const bool double_quotes = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char quote = double_quotes ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\' || c == quote) {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += char(c);
    }
  }
  return out + quote;
}

void json_string(std::string_view s, bool ensure_ascii, std::string& out) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
      out += '\\';
      out += c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : 'f';
    } else if (c < 0x20 || (c >= 0x80 && ensure_ascii)) {
      char32_t cp = c;
      size_t len = 1;
      if (c >= 0x80) decode_utf8(s, i, cp, len);
      char hex[16];
      if (cp > 0xffff) {  // a surrogate pair, as json.dumps writes it
        cp -= 0x10000;
        std::snprintf(hex, sizeof hex, "\\u%04x\\u%04x", unsigned(0xd800 + (cp >> 10)),
                      unsigned(0xdc00 + (cp & 0x3ff)));
      } else {
        std::snprintf(hex, sizeof hex, "\\u%04x", unsigned(cp));
      }
      out += hex;
      i += len;
      continue;
    } else {
      out += char(c);
    }
    ++i;
  }
  out += '"';
}

void newline_indent(const JsonStyle& style, int level, std::string& out) {
  if (style.indent < 0) return;
  out += '\n';
  out.append(size_t(style.indent * level), ' ');
}

void to_json(const Value& v, const JsonStyle& style, int level, std::string& out);

template <typename Items, typename Emit>
void json_container(char open, char close, const Items& items, const JsonStyle& style, int level, std::string& out,
                    Emit emit) {
  out += open;
  if (!items.empty()) {
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += style.item_separator;
      newline_indent(style, level + 1, out);
      emit(items[i]);
    }
    newline_indent(style, level, out);
  }
  out += close;
}

void to_json(const Value& v, const JsonStyle& style, int level, std::string& out) {
  switch (v.kind()) {
    case Value::Kind::None:
      out += "null";
      return;
    case Value::Kind::Bool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::Int:
      out += std::to_string(v.as_int());
      return;
    case Value::Kind::Float: {
      const double d = v.as_double();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : format_float(d);
      return;
    }
    case Value::Kind::String:
      json_string(v.as_text().str(), style.ensure_ascii, out);
      return;
    case Value::Kind::List:
      json_container('[', ']', v.as_list(), style, level, out,
                     [&](const Value& x) { to_json(x, style, level + 1, out); });
      return;
    case Value::Kind::Dict: {
      if (v.as_dict().is_namespace) break;
      std::vector<const std::pair<std::string, Value>*> items;
      for (const auto& kv : v.as_dict().items) items.push_back(&kv);
      if (style.sort_keys) std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
      json_container('{', '}', items, style, level, out, [&](const auto* kv) {
        json_string(kv->first, style.ensure_ascii, out);
        out += style.key_separator;
        to_json(kv->second, style, level + 1, out);
      });
      return;
    }
    default:
      break;
  }
  fail("Object of type " + type_name(v) + " is not JSON serializable");
}

}  // namespace

Text to_text(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
      return Text();
    case Value::Kind::None:
      return Text("None");
    case Value::Kind::Bool:
      return Text(v.as_bool() ? "True" : "False");
    case Value::Kind::Int:
      return Text(std::to_string(v.as_int()));
    case Value::Kind::Float:
      return Text(format_float(v.as_double()));
    case Value::Kind::String:
      return v.as_text();
    case Value::Kind::Function:
      return Text("<function " + v.as_function().name + ">");
    default:
      return Text(repr(v), has_user_bytes(v));
  }
}

std::string repr(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
      return "Undefined";
    case Value::Kind::String:
      return repr_string(v.as_text().str());
    case Value::Kind::List: {
      std::string out = "[";
      for (const Value& x : v.as_list()) out += (out.size() > 1 ? ", " : "") + repr(x);
      return out + "]";
    }
    case Value::Kind::Dict: {
      std::string out = "{";
      for (const auto& [k, x] : v.as_dict().items)
        out += (out.size() > 1 ? ", " : "") + repr_string(k) + ": " + repr(x);
      out += "}";
      return v.as_dict().is_namespace ? "<Namespace " + out + ">" : out;
    }
    default:
      return to_text(v).str();
  }
}

bool has_user_bytes(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::String:
      return v.as_text().has_user_bytes();
    case Value::Kind::List:
      return std::any_of(v.as_list().begin(), v.as_list().end(), [](const Value& x) { return has_user_bytes(x); });
    case Value::Kind::Dict:
      return std::any_of(v.as_dict().items.begin(), v.as_dict().items.end(),
                         [](const auto& kv) { return has_user_bytes(kv.second); });
    default:
      return false;
  }
}

JsonStyle default_json_style(int indent) {
  JsonStyle s;
  s.indent = indent;
  s.item_separator = indent < 0 ? ", " : ",";
  s.key_separator = ": ";
  return s;
}

std::string to_json(const Value& v, const JsonStyle& style) {
  std::string out;
  to_json(v, style, 0, out);
  return out;
}

}  // namespace parley::chat::jinja
