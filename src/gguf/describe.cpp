#include "gguf/describe.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace parley::gguf {
namespace {

constexpr size_t kMaxStringChars = 64;  // longer strings (chat templates) are cut
constexpr size_t kMaxArrayItems = 5;

std::string quoted(const std::string& s) {
  std::string out = "\"";
  const size_t n = std::min(s.size(), kMaxStringChars);
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  out += '"';
  if (n < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

// Shortest text that reads back as the same float (or double).
template <class F>
std::string shortest(F x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

std::string format_array(const Array& a) {
  std::string out = "[" + std::to_string(a.items.size()) + "]";
  const size_t n = std::min(a.items.size(), kMaxArrayItems);
  for (size_t i = 0; i < n; ++i) out += (i ? ", " : " ") + format_value(a.items[i]);
  if (n < a.items.size()) out += ", ...";
  return out;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}

// 1234567 -> "1,234,567"
std::string grouped(uint64_t x) {
  std::string digits = std::to_string(x), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", double(bytes) / (1024.0 * 1024.0));
  return buf;
}

std::string metadata_section(const File& f) {
  size_t key_width = 0, type_width = 0;
  for (const auto& key : f.keys()) {
    key_width = std::max(key_width, key.size());
    type_width = std::max(type_width, type_description(*f.find(key)).size());
  }
  std::string out = "metadata (" + std::to_string(f.keys().size()) + " keys):\n";
  for (const auto& key : f.keys()) {
    const Value& v = *f.find(key);
    out += "  " + pad(key, key_width) + "  " + pad(type_description(v), type_width) + "  " + format_value(v) + "\n";
  }
  return out;
}

std::string tensor_section(const File& f) {
  size_t name_width = 4, shape_width = 5;
  for (const auto& t : f.tensors()) {
    name_width = std::max(name_width, t.name.size());
    shape_width = std::max(shape_width, shape_text(t.dims).size());
  }
  std::string out = "tensors (" + std::to_string(f.tensors().size()) + "):\n";
  out += "  " + pad("name", name_width) + "  " + pad("type", 5) + "  " + pad("shape", shape_width) + "  bytes\n";
  uint64_t params = 0, bytes = 0;
  for (const auto& t : f.tensors()) {
    out += "  " + pad(t.name, name_width) + "  " + pad(std::string(dtype_name(t.type)), 5) + "  " +
           pad(shape_text(t.dims), shape_width) + "  " + grouped(t.n_bytes()) + "\n";
    params += t.n_elements();
    bytes += t.n_bytes();
  }
  out += "total: " + std::to_string(f.tensors().size()) + " tensors, " + grouped(params) + " parameters, " +
         grouped(bytes) + " bytes (" + mib(bytes) + ")\n";
  return out;
}

}  // namespace

std::string format_value(const Value& v) {
  switch (v.type) {
    case ValueType::FLOAT32: return shortest(float(v.as_float()));
    case ValueType::FLOAT64: return shortest(v.as_float());
    case ValueType::BOOL: return v.as_bool() ? "true" : "false";
    case ValueType::STRING: return quoted(v.as_string());
    case ValueType::ARRAY: return format_array(v.as_array());
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64:
      return std::to_string(v.as_int());
    default: return std::to_string(v.as_uint());
  }
}

std::string describe(const File& f) {
  std::string out = f.path() + ": GGUF v" + std::to_string(f.version()) + ", alignment " +
                    std::to_string(f.alignment()) + ", data section at offset " + std::to_string(f.data_offset()) + "\n";
  return out + metadata_section(f) + tensor_section(f);
}

}  // namespace parley::gguf
