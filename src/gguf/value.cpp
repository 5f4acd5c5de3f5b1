#include <limits>
#include <string>

#include "gguf/gguf.h"
#include "util/error.h"

namespace parley::gguf {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::UINT8: return "UINT8";
    case ValueType::INT8: return "INT8";
    case ValueType::UINT16: return "UINT16";
    case ValueType::INT16: return "INT16";
    case ValueType::UINT32: return "UINT32";
    case ValueType::INT32: return "INT32";
    case ValueType::FLOAT32: return "FLOAT32";
    case ValueType::BOOL: return "BOOL";
    case ValueType::STRING: return "STRING";
    case ValueType::ARRAY: return "ARRAY";
    case ValueType::UINT64: return "UINT64";
    case ValueType::INT64: return "INT64";
    case ValueType::FLOAT64: return "FLOAT64";
  }
  return "UNKNOWN";
}

size_t value_type_size(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
    case ValueType::UINT16: case ValueType::INT16: return 2;
    case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
    case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: return 8;
    case ValueType::STRING: case ValueType::ARRAY: return 0;
  }
  return 0;
}

std::string type_description(const Value& v) {
  std::string s = value_type_name(v.type);
  if (const auto* a = std::get_if<Array>(&v.v)) s += std::string(" of ") + value_type_name(a->elem_type);
  return s;
}

namespace {

[[noreturn]] void wrong_kind(const Value& v, const char* expected) {
  throw Error("value of type " + type_description(v) + " is not " + expected);
}

template <class T>
Value array_of(ValueType elem, const std::vector<T>& xs, Value (*make)(T)) {
  std::vector<Value> items;
  items.reserve(xs.size());
  for (const auto& x : xs) items.push_back(make(x));
  return Value::array(elem, std::move(items));
}

}  // namespace

Value Value::strings(const std::vector<std::string>& xs) {
  return array_of(ValueType::STRING, xs, &Value::str);
}
Value Value::floats(const std::vector<float>& xs) { return array_of(ValueType::FLOAT32, xs, &Value::f32); }
Value Value::ints(const std::vector<int32_t>& xs) { return array_of(ValueType::INT32, xs, &Value::i32); }

uint64_t Value::as_uint() const {
  if (const auto* u = std::get_if<uint64_t>(&v)) return *u;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    if (*i < 0) throw Error("value " + std::to_string(*i) + " of type " + value_type_name(type) +
                            " is negative, expected an unsigned integer");
    return uint64_t(*i);
  }
  wrong_kind(*this, "an integer");
}

int64_t Value::as_int() const {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&v)) {
    if (*u > uint64_t(std::numeric_limits<int64_t>::max()))
      throw Error("value " + std::to_string(*u) + " of type " + value_type_name(type) +
                  " does not fit a signed 64-bit integer");
    return int64_t(*u);
  }
  wrong_kind(*this, "an integer");
}

double Value::as_float() const {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* u = std::get_if<uint64_t>(&v)) return double(*u);
  if (const auto* i = std::get_if<int64_t>(&v)) return double(*i);
  wrong_kind(*this, "a number");
}

bool Value::as_bool() const {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  wrong_kind(*this, "a BOOL");
}

const std::string& Value::as_string() const {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  wrong_kind(*this, "a STRING");
}

const Array& Value::as_array() const {
  if (const auto* a = std::get_if<Array>(&v)) return *a;
  wrong_kind(*this, "an ARRAY");
}

}  // namespace parley::gguf
