// File::parse: the GGUF layout (header, metadata, tensor infos, aligned data
// section) checked field by field against the bytes actually in the file.
#include <algorithm>
#include <cstdio>
#include <numeric>

#include "gguf/cursor.h"
#include "gguf/format.h"
#include "gguf/gguf.h"

namespace parley::gguf {
namespace {

constexpr int kMaxArrayDepth = 8;
// Each element becomes a Value (48 bytes): a cap keeps a corrupt length in a
// large file from costing gigabytes. Real vocabularies hold well under 2M.
constexpr uint64_t kMaxArrayLength = uint64_t(1) << 24;
// Smallest encodings, used to reject counts the rest of the file cannot hold.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;                  // empty key, value type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // empty name, n_dims, one dim, type, offset
constexpr uint64_t kMinStringBytes = 8;                      // empty string
constexpr uint64_t kMinArrayBytes = 4 + 8;                   // element type, length

std::string hex32(uint32_t x) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", x);
  return buf;
}

ValueType read_value_type(Cursor& c, const Where& w, std::string_view field) {
  const auto id = c.read<uint32_t>(w, field);
  if (id > uint32_t(ValueType::FLOAT64))
    c.fail(w, std::string(field) + " " + std::to_string(id) + " is not a GGUF value type (expected 0 to 12)");
  return ValueType(id);
}

Value read_value(Cursor& c, ValueType t, const Where& w, int depth);

Array read_array(Cursor& c, const Where& w, int depth) {
  if (depth > kMaxArrayDepth)
    c.fail(w, "arrays nested deeper than " + std::to_string(kMaxArrayDepth) + " levels");
  Array a;
  a.elem_type = read_value_type(c, w, "array element type");
  const auto n = c.read<uint64_t>(w, "array length");
  const uint64_t fixed = value_type_size(a.elem_type);
  const uint64_t min_bytes = fixed ? fixed : a.elem_type == ValueType::STRING ? kMinStringBytes : kMinArrayBytes;
  c.check_count(n, min_bytes, w, "array length");
  if (n > kMaxArrayLength)
    c.fail(w, "array length " + std::to_string(n) + " exceeds the limit of " + std::to_string(kMaxArrayLength));
  a.items.reserve(n);
  for (uint64_t i = 0; i < n; ++i) a.items.push_back(read_value(c, a.elem_type, Where{&w, {}, i}, depth));
  return a;
}

template <class T, class Wide>
Value read_scalar(Cursor& c, ValueType t, const Where& w) {
  return Value{t, Wide(c.read<T>(w, value_type_name(t)))};
}

Value read_value(Cursor& c, ValueType t, const Where& w, int depth) {
  switch (t) {
    case ValueType::UINT8: return read_scalar<uint8_t, uint64_t>(c, t, w);
    case ValueType::UINT16: return read_scalar<uint16_t, uint64_t>(c, t, w);
    case ValueType::UINT32: return read_scalar<uint32_t, uint64_t>(c, t, w);
    case ValueType::UINT64: return read_scalar<uint64_t, uint64_t>(c, t, w);
    case ValueType::INT8: return read_scalar<int8_t, int64_t>(c, t, w);
    case ValueType::INT16: return read_scalar<int16_t, int64_t>(c, t, w);
    case ValueType::INT32: return read_scalar<int32_t, int64_t>(c, t, w);
    case ValueType::INT64: return read_scalar<int64_t, int64_t>(c, t, w);
    case ValueType::FLOAT32: return read_scalar<float, double>(c, t, w);
    case ValueType::FLOAT64: return read_scalar<double, double>(c, t, w);
    case ValueType::BOOL: {
      const auto b = c.read<uint8_t>(w, "BOOL");
      if (b > 1) c.fail(w, "BOOL byte is " + std::to_string(b) + ", expected 0 or 1");
      return Value{t, b == 1};
    }
    case ValueType::STRING: return Value{t, c.read_string(w, "string")};
    case ValueType::ARRAY: return Value{t, read_array(c, w, depth + 1)};
  }
  c.fail(w, "value type " + std::to_string(uint32_t(t)) + " is unknown");
}

uint32_t read_version(Cursor& c, const Where& header) {
  const auto magic = c.read<uint32_t>(header, "magic");
  if (magic != kMagic)
    c.fail(header, "magic is " + hex32(magic) + ", expected " + hex32(kMagic) + " (\"GGUF\"): not a GGUF file");
  const auto version = c.read<uint32_t>(header, "version");
  if (version != 2 && version != 3) {
    const auto swapped = __builtin_bswap32(version);
    c.fail(header, "version " + std::to_string(version) + " is not supported, expected 2 or 3" +
                       (swapped == 2 || swapped == 3 ? " (a big-endian file?)" : ""));
  }
  return version;
}

uint64_t read_alignment(const Cursor& c, const std::map<std::string, Value>& metadata) {
  const auto it = metadata.find("general.alignment");
  if (it == metadata.end()) return kDefaultAlignment;
  const Where w{nullptr, "metadata key 'general.alignment'"};
  if (it->second.type != ValueType::UINT32)
    c.fail(w, "type is " + type_description(it->second) + ", expected UINT32");
  const auto a = it->second.as_uint();
  if (!valid_alignment(a)) c.fail(w, "value " + std::to_string(a) + " is not a power of two");
  return a;
}

std::string tensor_label(const std::string& name) { return "tensor '" + name + "'"; }

TensorInfo read_tensor_info(Cursor& c, uint64_t i) {
  TensorInfo t;
  const std::string entry = "tensor #" + std::to_string(i);
  t.name = c.read_string(Where{nullptr, entry}, "name");
  const std::string label = tensor_label(t.name);
  const Where w{nullptr, label};
  const auto n_dims = c.read<uint32_t>(w, "n_dims");
  if (n_dims == 0 || n_dims > kMaxDims)
    c.fail(w, "n_dims is " + std::to_string(n_dims) + ", expected 1 to " + std::to_string(kMaxDims));
  t.dims.resize(n_dims);
  for (auto& d : t.dims) d = c.read<uint64_t>(w, "dims");
  const auto type_id = c.read<uint32_t>(w, "type");
  if (!dtype_traits(type_id)) c.fail(w, "type id " + std::to_string(type_id) + " is not a supported tensor type");
  t.type = DType(type_id);
  t.offset = c.read<uint64_t>(w, "offset");
  return t;
}

// Size in bytes, after checking the shape fits the type's blocks and 64 bits.
uint64_t checked_n_bytes(const Cursor& c, const Where& w, const TensorInfo& t) {
  uint64_t elems = 1;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (t.dims[i] == 0) c.fail(w, "dims[" + std::to_string(i) + "] is 0, expected at least 1");
    if (__builtin_mul_overflow(elems, t.dims[i], &elems))
      c.fail(w, "shape " + shape_text(t.dims) + " has more than 2^64 elements");
  }
  const auto& tr = traits(t.type);
  if (t.dims[0] % uint64_t(tr.block_elems) != 0)
    c.fail(w, "row of " + std::to_string(t.dims[0]) + " elements is not a multiple of the " +
                  std::string(tr.name) + " block size " + std::to_string(tr.block_elems));
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(elems / uint64_t(tr.block_elems), uint64_t(tr.block_bytes), &bytes))
    c.fail(w, "shape " + shape_text(t.dims) + " of type " + std::string(tr.name) + " needs more than 2^64 bytes");
  return bytes;
}

std::string extent_text(const TensorInfo& t, uint64_t bytes) {
  return "[offset " + std::to_string(t.offset) + ", " + std::to_string(bytes) + " bytes]";
}

// Points each tensor into the mapping after checking alignment and bounds.
void place_tensors(const Cursor& c, std::vector<TensorInfo>& tensors, uint64_t data_offset, uint64_t alignment) {
  for (auto& t : tensors) {
    const std::string label = tensor_label(t.name);
    const Where w{nullptr, label};
    const uint64_t bytes = checked_n_bytes(c, w, t);
    if (t.offset % alignment != 0)
      c.fail(w, "offset " + std::to_string(t.offset) + " is not a multiple of the alignment " + std::to_string(alignment));
    uint64_t start = 0;
    if (__builtin_add_overflow(data_offset, t.offset, &start) || start > c.size() || bytes > c.size() - start)
      c.fail(w, "data " + extent_text(t, bytes) + " extends past end of file (" + std::to_string(c.size()) +
                    " bytes, data section at " + std::to_string(data_offset) + ")");
    t.data = c.base() + start;
  }
}

void check_no_overlap(const Cursor& c, const std::vector<TensorInfo>& tensors) {
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
  for (size_t i = 1; i < order.size(); ++i) {
    const auto& prev = tensors[order[i - 1]];
    const auto& t = tensors[order[i]];
    if (t.offset < prev.offset + prev.n_bytes()) {
      const std::string label = tensor_label(t.name);
      c.fail(Where{nullptr, label}, "data " + extent_text(t, t.n_bytes()) + " overlaps tensor '" + prev.name +
                                        "' " + extent_text(prev, prev.n_bytes()));
    }
  }
}

}  // namespace

void File::parse() {
  Cursor c(*map_);
  const Where header{nullptr, "header"};
  version_ = read_version(c, header);
  const auto n_tensors = c.read<uint64_t>(header, "tensor_count");
  const auto n_kv = c.read<uint64_t>(header, "metadata_kv_count");
  c.check_count(n_kv, kMinKvBytes, header, "metadata_kv_count");

  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string entry = "metadata entry #" + std::to_string(i);
    auto key = c.read_string(Where{nullptr, entry}, "key");
    const std::string label = "metadata key '" + key + "'";
    const Where w{nullptr, label};
    if (metadata_.contains(key)) c.fail(w, "duplicate key");
    const auto type = read_value_type(c, w, "value type");
    metadata_.emplace(key, read_value(c, type, w, 0));
    keys_.push_back(std::move(key));
  }
  alignment_ = read_alignment(c, metadata_);

  c.check_count(n_tensors, kMinTensorInfoBytes, header, "tensor_count");
  tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    auto t = read_tensor_info(c, i);
    if (!tensor_index_.emplace(t.name, tensors_.size()).second) {
      const std::string label = tensor_label(t.name);
      c.fail(Where{nullptr, label}, "duplicate tensor name");
    }
    tensors_.push_back(std::move(t));
  }
  data_offset_ = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  place_tensors(c, tensors_, data_offset_, alignment_);
  check_no_overlap(c, tensors_);
}

}  // namespace parley::gguf
