// Writer: serialises metadata and tensor infos into memory, then streams them
// and the tensor data to a temporary file that is renamed over `path`.
#include "gguf/writer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <type_traits>

#include "gguf/format.h"
#include "util/error.h"

namespace parley::gguf {
namespace {

constexpr uint32_t kVersion = 3;

using Bytes = std::vector<uint8_t>;

template <class T>
void put(Bytes& b, T x) {
  const auto* p = reinterpret_cast<const uint8_t*>(&x);
  b.insert(b.end(), p, p + sizeof(T));
}

void put_string(Bytes& b, const std::string& s) {
  put<uint64_t>(b, s.size());
  b.insert(b.end(), s.begin(), s.end());
}

// Integers are narrowed to their file type only when the value fits.
template <class T>
void put_int(Bytes& b, const Value& v) {
  using Lim = std::numeric_limits<T>;
  if constexpr (std::is_signed_v<T>) {
    const int64_t x = v.as_int();
    if (x < Lim::min() || x > Lim::max())
      throw Error("value " + std::to_string(x) + " does not fit " + value_type_name(v.type));
    put<T>(b, T(x));
  } else {
    const uint64_t x = v.as_uint();
    if (x > Lim::max()) throw Error("value " + std::to_string(x) + " does not fit " + value_type_name(v.type));
    put<T>(b, T(x));
  }
}

void put_value(Bytes& b, const Value& v) {
  switch (v.type) {
    case ValueType::UINT8: return put_int<uint8_t>(b, v);
    case ValueType::UINT16: return put_int<uint16_t>(b, v);
    case ValueType::UINT32: return put_int<uint32_t>(b, v);
    case ValueType::UINT64: return put_int<uint64_t>(b, v);
    case ValueType::INT8: return put_int<int8_t>(b, v);
    case ValueType::INT16: return put_int<int16_t>(b, v);
    case ValueType::INT32: return put_int<int32_t>(b, v);
    case ValueType::INT64: return put_int<int64_t>(b, v);
    case ValueType::FLOAT32: return put<float>(b, float(v.as_float()));
    case ValueType::FLOAT64: return put<double>(b, v.as_float());
    case ValueType::BOOL: return put<uint8_t>(b, v.as_bool() ? 1 : 0);
    case ValueType::STRING: return put_string(b, v.as_string());
    case ValueType::ARRAY: {
      const Array& a = v.as_array();
      put<uint32_t>(b, uint32_t(a.elem_type));
      put<uint64_t>(b, a.items.size());
      for (size_t i = 0; i < a.items.size(); ++i) {
        if (a.items[i].type != a.elem_type)
          throw Error("array element " + std::to_string(i) + " has type " + value_type_name(a.items[i].type) +
                      ", expected " + value_type_name(a.elem_type));
        put_value(b, a.items[i]);
      }
      return;
    }
  }
  throw Error("value type id " + std::to_string(uint32_t(v.type)) + " is unknown");
}

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

[[noreturn]] void key_error(const std::string& path, const std::string& key, const std::string& what) {
  throw Error(path + ": metadata key '" + key + "': " + what);
}

// general.alignment when set: it must be a UINT32 power of two, as readers require.
uint64_t alignment_of(const std::vector<std::pair<std::string, Value>>& kv, const std::string& path) {
  for (const auto& [key, value] : kv) {
    if (key != "general.alignment") continue;
    if (value.type != ValueType::UINT32) key_error(path, key, "type is " + type_description(value) + ", expected UINT32");
    const uint64_t a = value.as_uint();
    if (!valid_alignment(a)) key_error(path, key, "value " + std::to_string(a) + " is not a power of two");
    return a;
  }
  return kDefaultAlignment;
}

void put_metadata(Bytes& b, const std::vector<std::pair<std::string, Value>>& kv, const std::string& path) {
  for (const auto& [key, value] : kv) {
    put_string(b, key);
    put<uint32_t>(b, uint32_t(value.type));
    try {
      put_value(b, value);
    } catch (const Error& e) {
      key_error(path, key, e.what());
    }
  }
}

// Streams `head` then each tensor at its offset, zero padding in between and
// up to the alignment at the end.
template <class Tensors>
void write_file(const std::string& path, const Bytes& head, const Tensors& tensors,
                const std::vector<uint64_t>& offsets, uint64_t alignment) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(path + ": cannot create: " + std::strerror(errno));
  out.write(reinterpret_cast<const char*>(head.data()), std::streamsize(head.size()));
  const std::vector<char> zeros(alignment, 0);
  uint64_t written = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    out.write(zeros.data(), std::streamsize(offsets[i] - written));
    out.write(reinterpret_cast<const char*>(tensors[i].data.data()), std::streamsize(tensors[i].data.size()));
    written = offsets[i] + tensors[i].data.size();
  }
  out.write(zeros.data(), std::streamsize(align_up(written, alignment) - written));
  out.close();
  if (!out) throw Error(path + ": write failed");
}

}  // namespace

void Writer::set(const std::string& key, Value value) {
  const auto it = std::find_if(kv_.begin(), kv_.end(), [&](const auto& kv) { return kv.first == key; });
  if (it != kv_.end())
    it->second = std::move(value);
  else
    kv_.emplace_back(key, std::move(value));
}

void Writer::add_tensor(const std::string& name, DType type, std::vector<uint64_t> dims, std::vector<uint8_t> data) {
  const std::string where = "gguf writer: tensor '" + name + "': ";
  if (std::any_of(tensors_.begin(), tensors_.end(), [&](const auto& t) { return t.name == name; }))
    throw Error(where + "duplicate tensor name");
  if (dims.empty() || dims.size() > kMaxDims)
    throw Error(where + std::to_string(dims.size()) + " dims, expected 1 to " + std::to_string(kMaxDims));
  const auto& tr = traits(type);
  uint64_t elems = 1;
  for (const auto d : dims)
    if (d == 0 || __builtin_mul_overflow(elems, d, &elems)) throw Error(where + "a dimension is 0 or the shape overflows");
  if (dims[0] % uint64_t(tr.block_elems) != 0)
    throw Error(where + "row of " + std::to_string(dims[0]) + " elements is not a multiple of the " +
                std::string(tr.name) + " block size " + std::to_string(tr.block_elems));
  const TensorInfo info{name, dims, type, 0, nullptr};
  if (data.size() != info.n_bytes())
    throw Error(where + "data has " + std::to_string(data.size()) + " bytes, expected " + std::to_string(info.n_bytes()));
  tensors_.push_back({name, type, std::move(dims), std::move(data)});
}

void Writer::write(const std::string& path) const {
  const uint64_t alignment = alignment_of(kv_, path);
  Bytes head;
  put<uint32_t>(head, kMagic);
  put<uint32_t>(head, kVersion);
  put<uint64_t>(head, tensors_.size());
  put<uint64_t>(head, kv_.size());
  put_metadata(head, kv_, path);
  std::vector<uint64_t> offsets;
  uint64_t data_size = 0;
  for (const auto& t : tensors_) {
    put_string(head, t.name);
    put<uint32_t>(head, uint32_t(t.dims.size()));
    for (const auto d : t.dims) put<uint64_t>(head, d);
    put<uint32_t>(head, uint32_t(t.type));
    offsets.push_back(align_up(data_size, alignment));
    put<uint64_t>(head, offsets.back());
    data_size = offsets.back() + t.data.size();
  }
  head.resize(align_up(head.size(), alignment), 0);

  // Written beside the target, under a per-process name, so that the rename
  // is atomic and readers never see a half-written file.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::error_code ec;
  try {
    write_file(tmp, head, tensors_, offsets, alignment);
    std::filesystem::rename(tmp, path, ec);
  } catch (const Error&) {
    std::filesystem::remove(tmp, ec);
    throw;
  }
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(path + ": cannot rename " + tmp + " into place: " + ec.message());
  }
}

}  // namespace parley::gguf
