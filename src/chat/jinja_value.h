#pragma once
// Values of the Jinja interpreter, with Python's semantics where templates can
// observe them: truthiness, equality, ordering, str() and repr(), json.dumps().
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "chat/jinja_text.h"

namespace parley::chat::jinja {

// A failure inside an operation; the interpreter adds the template position.
class EvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The largest string or list a template may build (a guard against runaway
// templates, far above any real prompt).
inline constexpr size_t kMaxSize = size_t(64) << 20;
inline constexpr uint32_t kMaxNesting = 256;  // lists and dicts inside each other

class Value;
using List = std::vector<Value>;

// Insertion-ordered, string-keyed (Python dicts keep insertion order, which
// tojson shows). A namespace() object is the one kind templates may modify.
struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;

  const Value* find(std::string_view key) const;
  void set(std::string_view key, Value v);
};

// The arguments of a call such as f(1, x=2).
struct Args {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;

  // The i-th positional argument, or else the one named `name`; nullptr if absent.
  const Value* get(size_t i, std::string_view name) const;
};

struct Function {
  std::string name;
  std::function<Value(const Args&)> call;
};

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Function };

  Value() : data_(UndefinedWhy{}) {}
  // `why`: the message for a use that needs a value, e.g. "'x' is undefined".
  static Value undefined(std::string why) { return Value(UndefinedWhy{std::move(why)}); }
  static Value none() { return Value(NoneTag{}); }
  static Value boolean(bool b) { return Value(b); }
  static Value integer(int64_t i) { return Value(i); }
  static Value number(double d) { return Value(d); }
  static Value string(Text t) { return Value(std::move(t)); }
  static Value string(std::string s) { return Value(Text(std::move(s))); }
  // Containers fail when nested more than kMaxNesting deep.
  static Value list(List items);
  static Value dict(std::shared_ptr<Dict> d);
  static Value function(std::string name, std::function<Value(const Args&)> call);

  Kind kind() const { return Kind(data_.index()); }
  bool is_undefined() const { return kind() == Kind::Undefined; }
  bool is_none() const { return kind() == Kind::None; }
  bool is_string() const { return kind() == Kind::String; }
  bool is_number() const { return kind() == Kind::Bool || kind() == Kind::Int || kind() == Kind::Float; }

  const std::string& undefined_why() const { return std::get<UndefinedWhy>(data_).why; }
  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const;    // Bool or Int
  double as_double() const;  // any number
  const Text& as_text() const { return std::get<Text>(data_); }
  const List& as_list() const { return *std::get<std::shared_ptr<const List>>(data_); }
  Dict& as_dict() const { return *std::get<std::shared_ptr<Dict>>(data_); }
  const Function& as_function() const { return *std::get<std::shared_ptr<const Function>>(data_); }

  // Whether a namespace() is inside: templates can change namespaces only, so
  // refusing to store one in another keeps values acyclic (and, with the
  // kMaxNesting check, their depth bounded).
  bool holds_namespace() const { return holds_namespace_; }

 private:
  struct UndefinedWhy {
    std::string why;
  };
  struct NoneTag {};
  using Data = std::variant<UndefinedWhy, NoneTag, bool, int64_t, double, Text, std::shared_ptr<const List>,
                            std::shared_ptr<Dict>, std::shared_ptr<const Function>>;
  template <typename T>
  explicit Value(T v) : data_(std::move(v)) {}
  void contain(const Value& child);  // updates nesting_ and holds_namespace_

  Data data_;
  uint32_t nesting_ = 0;  // levels of containers; 0 for a scalar
  bool holds_namespace_ = false;
};

[[noreturn]] void fail(const std::string& message);
[[noreturn]] void fail_undefined(const Value& v);  // fails with v's reason
void check_size(size_t size);                      // fails above kMaxSize

std::string type_name(const Value& v);  // Python's: str, int, list, dict, NoneType, ...
bool truthy(const Value& v);
bool equals(const Value& a, const Value& b);
// <0, 0, >0; fails for types Python cannot order (`op` names the operator).
int compare(const Value& a, const Value& b, std::string_view op);
Text to_text(const Value& v);         // str(v); message bytes stay marked
std::string repr(const Value& v);     // repr(v)
bool has_user_bytes(const Value& v);  // any message text inside

struct JsonStyle {
  int indent = -1;  // < 0: one line
  std::string item_separator, key_separator;
  bool sort_keys = false;
  bool ensure_ascii = false;
};
JsonStyle default_json_style(int indent);  // json.dumps' separators for that indent
std::string to_json(const Value& v, const JsonStyle& style);

std::string format_float(double d);  // Python's repr(float)

}  // namespace parley::chat::jinja
