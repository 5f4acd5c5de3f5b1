// File::open, look-ups and typed metadata getters.
#include <limits>

#include "gguf/gguf.h"
#include "util/error.h"

namespace parley::gguf {
namespace {

[[noreturn]] void key_error(const File& f, const std::string& key, const std::string& what) {
  throw Error(f.path() + ": metadata key '" + key + "': " + what);
}

const Value& require(const File& f, const std::string& key) {
  const Value* v = f.find(key);
  if (!v) key_error(f, key, "missing");
  return *v;
}

// Runs a Value conversion, naming the key when it fails.
template <class Fn>
auto convert(const File& f, const std::string& key, const Value& v, Fn fn) -> decltype(fn(v)) {
  try {
    return fn(v);
  } catch (const Error& e) {
    key_error(f, key, e.what());
  }
}

bool is_integer(ValueType t) {
  return value_type_size(t) != 0 && t != ValueType::BOOL && t != ValueType::FLOAT32 && t != ValueType::FLOAT64;
}
bool is_number(ValueType t) { return value_type_size(t) != 0 && t != ValueType::BOOL; }

// The array under `key` when its elements satisfy `elem_ok`; nullptr if absent.
const Array* array_at(const File& f, const std::string& key, bool (*elem_ok)(ValueType), const char* expected) {
  const Value* v = f.find(key);
  if (!v) return nullptr;
  const auto* a = std::get_if<Array>(&v->v);
  if (v->type != ValueType::ARRAY || !a || !elem_ok(a->elem_type))
    key_error(f, key, "type is " + type_description(*v) + ", expected " + expected);
  return a;
}

}  // namespace

uint64_t TensorInfo::n_elements() const {
  uint64_t n = 1;
  for (const auto d : dims) n *= d;
  return n;
}

uint64_t TensorInfo::n_bytes() const {
  uint64_t rows = 1;
  for (size_t i = 1; i < dims.size(); ++i) rows *= dims[i];
  return dims.empty() ? 0 : row_bytes(type, dims[0]) * rows;
}

std::string shape_text(const std::vector<uint64_t>& dims) {
  std::string s;
  for (const auto d : dims) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s;
}

std::unique_ptr<File> File::open(const std::string& path) {
  std::unique_ptr<File> f(new File(std::make_unique<MappedFile>(path)));
  f->parse();
  return f;
}

const Value* File::find(const std::string& key) const {
  const auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

const TensorInfo* File::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::string File::get_string(const std::string& key) const {
  return convert(*this, key, require(*this, key), [](const Value& v) { return v.as_string(); });
}
std::string File::get_string(const std::string& key, const std::string& dflt) const {
  return find(key) ? get_string(key) : dflt;
}

uint64_t File::get_uint(const std::string& key) const {
  return convert(*this, key, require(*this, key), [](const Value& v) { return v.as_uint(); });
}
uint64_t File::get_uint(const std::string& key, uint64_t dflt) const { return find(key) ? get_uint(key) : dflt; }

double File::get_float(const std::string& key, double dflt) const {
  const Value* v = find(key);
  return v ? convert(*this, key, *v, [](const Value& x) { return x.as_float(); }) : dflt;
}

bool File::get_bool(const std::string& key, bool dflt) const {
  const Value* v = find(key);
  return v ? convert(*this, key, *v, [](const Value& x) { return x.as_bool(); }) : dflt;
}

std::vector<std::string> File::get_strings(const std::string& key) const {
  const Array* a = array_at(*this, key, [](ValueType t) { return t == ValueType::STRING; }, "ARRAY of STRING");
  std::vector<std::string> out;
  if (!a) return out;
  out.reserve(a->items.size());
  for (const auto& item : a->items) out.push_back(item.as_string());
  return out;
}

std::vector<float> File::get_floats(const std::string& key) const {
  const Array* a = array_at(*this, key, is_number, "ARRAY of numbers");
  std::vector<float> out;
  if (!a) return out;
  out.reserve(a->items.size());
  for (const auto& item : a->items) out.push_back(float(item.as_float()));
  return out;
}

std::vector<int32_t> File::get_ints(const std::string& key) const {
  const Array* a = array_at(*this, key, is_integer, "ARRAY of integers");
  std::vector<int32_t> out;
  if (!a) return out;
  out.reserve(a->items.size());
  for (size_t i = 0; i < a->items.size(); ++i) {
    const int64_t x = convert(*this, key, a->items[i], [](const Value& v) { return v.as_int(); });
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max())
      key_error(*this, key, "element " + std::to_string(i) + " = " + std::to_string(x) + " does not fit INT32");
    out.push_back(int32_t(x));
  }
  return out;
}

}  // namespace parley::gguf
