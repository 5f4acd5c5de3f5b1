// Attribute and item access, the methods of str and dict values, membership
// and iteration.
#include <algorithm>
#include <charconv>
#include <optional>

#include "chat/jinja_args.h"
#include "chat/jinja_builtins.h"
#include "chat/jinja_strings.h"

namespace parley::chat::jinja {
namespace {

Value string_list(std::vector<Text> parts) {
  List out;
  for (Text& t : parts) out.push_back(Value::string(std::move(t)));
  return Value::list(std::move(out));
}

Value undefined_attribute(const Value& object, std::string_view name) {
  return Value::undefined("'" + type_name(object) + " object' has no attribute '" + std::string(name) + "'");
}

using StrMethod = Value (*)(const Text& self, const Args& a);

Value m_strip(const Text& s, const Args& a) { return Value::string(strip(s, true, true, opt_string(a, 0, "chars"))); }
Value m_lstrip(const Text& s, const Args& a) { return Value::string(strip(s, true, false, opt_string(a, 0, "chars"))); }
Value m_rstrip(const Text& s, const Args& a) { return Value::string(strip(s, false, true, opt_string(a, 0, "chars"))); }
Value m_split(const Text& s, const Args& a) {
  return string_list(split(s, opt_string(a, 0, "sep"), opt_int(a, 1, "maxsplit", -1)));
}
Value m_upper(const Text& s, const Args&) { return Value::string(s.with_same_marks(upper(s.str()))); }
Value m_lower(const Text& s, const Args&) { return Value::string(s.with_same_marks(lower(s.str()))); }
Value m_title(const Text& s, const Args&) { return Value::string(s.with_same_marks(title(s.str()))); }
Value m_capitalize(const Text& s, const Args&) { return Value::string(s.with_same_marks(capitalize(s.str()))); }
Value m_replace(const Text& s, const Args& a) {
  return Value::string(
      replace(s, str(required(a, 0, "old")), to_text(required(a, 1, "new")), opt_int(a, 2, "count", -1)));
}
Value m_find(const Text& s, const Args& a) {  // a code point index, as Python counts
  const size_t at = s.str().find(str(required(a, 0, "sub")));
  return Value::integer(at == std::string::npos ? -1 : int64_t(char_count(std::string_view(s.str()).substr(0, at))));
}
Value m_join(const Text& s, const Args& a) { return Value::string(join_text(iterate(required(a, 0, "iterable")), s)); }

// startswith / endswith take a string or a tuple (list) of them.
template <bool kStart>
Value m_affix(const Text& s, const Args& a) {
  const Value& arg = required(a, 0, kStart ? "prefix" : "suffix");
  const List options = arg.kind() == Value::Kind::List ? arg.as_list() : List{arg};
  return Value::boolean(std::any_of(options.begin(), options.end(), [&](const Value& o) {
    if (!o.is_string()) fail("startswith/endswith arguments must be strings, not " + type_name(o));
    return kStart ? s.str().starts_with(o.as_text().str()) : s.str().ends_with(o.as_text().str());
  }));
}

struct NamedStrMethod {
  std::string_view name;
  StrMethod fn;
};
constexpr NamedStrMethod kStrMethods[] = {
    {"capitalize", m_capitalize}, {"endswith", m_affix<false>},  {"find", m_find},       {"join", m_join},
    {"lower", m_lower},           {"lstrip", m_lstrip},          {"replace", m_replace}, {"rstrip", m_rstrip},
    {"split", m_split},           {"startswith", m_affix<true>}, {"strip", m_strip},     {"title", m_title},
    {"upper", m_upper},
};

Value string_method(const Value& self, std::string_view name) {
  for (const NamedStrMethod& m : kStrMethods) {
    if (m.name == name) {
      return Value::function(std::string(name),
                             [text = self.as_text(), fn = m.fn](const Args& a) { return fn(text, a); });
    }
  }
  return undefined_attribute(self, name);
}

Value dict_method(const Value& self, std::string_view name) {
  const auto bind = [&](std::function<Value(const Args&)> fn) { return Value::function(std::string(name), fn); };
  if (name == "items") return bind([self](const Args&) { return dict_items(self); });
  if (name == "keys") return bind([self](const Args&) { return Value::list(iterate(self)); });
  if (name == "values") {
    return bind([self](const Args&) {
      List out;
      for (const auto& kv : self.as_dict().items) out.push_back(kv.second);
      return Value::list(std::move(out));
    });
  }
  if (name == "get") {
    return bind([self](const Args& a) {
      const Value* v = self.as_dict().find(str(required(a, 0, "key")));
      const Value* dflt = a.get(1, "default");
      return v ? *v : dflt ? *dflt : Value::none();
    });
  }
  return Value::undefined("");
}

}  // namespace

Text join_text(const List& items, const Text& separator) {
  Text out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out.append(separator);
    out.append(to_text(items[i]));
    check_size(out.size());
  }
  return out;
}

Value get_path(const Value& v, const std::string& path) {
  Value cur = v;
  size_t begin = 0;
  while (true) {
    const size_t dot = path.find('.', begin);
    const std::string part = path.substr(begin, dot - begin);
    int64_t index = 0;
    const bool numeric = !part.empty() && std::from_chars(part.data(), part.data() + part.size(), index).ptr ==
                                              part.data() + part.size();
    cur = get_item(cur, numeric ? Value::integer(index) : Value::string(part));
    if (dot == std::string::npos) return cur;
    begin = dot + 1;
  }
}

Value dict_items(const Value& v) {
  if (v.is_undefined()) return Value::list({});
  if (v.kind() != Value::Kind::Dict || v.as_dict().is_namespace) fail("items() needs a mapping, not " + type_name(v));
  List out;
  for (const auto& [k, x] : v.as_dict().items) out.push_back(Value::list({Value::string(k), x}));
  return Value::list(std::move(out));
}

Value get_attribute(const Value& object, std::string_view name) {
  switch (object.kind()) {
    case Value::Kind::Undefined:
      fail_undefined(object);
    case Value::Kind::String:
      return string_method(object, name);
    case Value::Kind::Dict: {
      // Python's getattr finds a dict's methods before its keys.
      if (!object.as_dict().is_namespace) {
        if (Value m = dict_method(object, name); !m.is_undefined()) return m;
      }
      if (const Value* v = object.as_dict().find(name)) return *v;
      return undefined_attribute(object, name);
    }
    default:
      return undefined_attribute(object, name);
  }
}

Value get_item(const Value& object, const Value& key) {
  if (object.is_undefined()) fail_undefined(object);
  if (key.is_string()) {  // a dict entry first, then an attribute
    if (object.kind() == Value::Kind::Dict) {
      if (const Value* v = object.as_dict().find(key.as_text().str())) return *v;
    }
    return get_attribute(object, key.as_text().str());
  }
  if (key.kind() != Value::Kind::Int && key.kind() != Value::Kind::Bool) return Value::undefined("invalid index");
  const int64_t i = key.as_int();
  if (object.kind() == Value::Kind::List) {
    const List& items = object.as_list();
    const int64_t at = i < 0 ? i + int64_t(items.size()) : i;
    if (at >= 0 && at < int64_t(items.size())) return items[size_t(at)];
    return Value::undefined("list object has no element " + std::to_string(i));
  }
  if (object.is_string()) {
    const Text c = slice(object.as_text(), i, i == -1 ? std::nullopt : std::optional<int64_t>(i + 1), 1);
    return c.empty() ? Value::undefined("string index out of range") : Value::string(c);
  }
  return Value::undefined("'" + type_name(object) + "' object has no element " + std::to_string(i));
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::Undefined:
      return false;
    case Value::Kind::String:
      if (!item.is_string()) fail("'in <string>' requires string as left operand, not " + type_name(item));
      return container.as_text().str().find(item.as_text().str()) != std::string::npos;
    case Value::Kind::List:
      return std::any_of(container.as_list().begin(), container.as_list().end(),
                         [&](const Value& x) { return equals(x, item); });
    case Value::Kind::Dict:
      return !container.as_dict().is_namespace && item.is_string() && container.as_dict().find(item.as_text().str());
    default:
      fail("argument of type '" + type_name(container) + "' is not iterable");
  }
}

List iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
      return {};
    case Value::Kind::List:
      return v.as_list();
    case Value::Kind::String: {
      List out;
      for (Text& c : characters(v.as_text())) out.push_back(Value::string(std::move(c)));
      return out;
    }
    case Value::Kind::Dict: {
      if (v.as_dict().is_namespace) break;
      List out;
      for (const auto& kv : v.as_dict().items) out.push_back(Value::string(kv.first));
      return out;
    }
    default:
      break;
  }
  fail("'" + type_name(v) + "' object is not iterable");
}

}  // namespace parley::chat::jinja
