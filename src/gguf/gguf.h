#pragma once
// GGUF (v2, v3) reader: metadata key/values, tensor infos and zero-copy
// tensor data from a memory-mapped file. Every malformed input raises
// parley::Error naming the file, the field or tensor, and what was expected.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kernels/dtype.h"
#include "util/mapped_file.h"

namespace parley::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
  BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
const char* value_type_name(ValueType t);
// Bytes one value of a fixed-size type takes in a file; 0 for STRING and ARRAY.
size_t value_type_size(ValueType t);

struct Value;
struct Array {
  ValueType elem_type = ValueType::UINT8;
  std::vector<Value> items;
  bool operator==(const Array&) const = default;
};

// A metadata value. Integers are widened to 64 bits, floats to double; `type`
// keeps the type written in the file (the writer writes it back unchanged).
struct Value {
  ValueType type = ValueType::UINT32;
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> v;

  static Value u32(uint32_t x) { return {ValueType::UINT32, uint64_t(x)}; }
  static Value u64(uint64_t x) { return {ValueType::UINT64, x}; }
  static Value i32(int32_t x) { return {ValueType::INT32, int64_t(x)}; }
  static Value f32(float x) { return {ValueType::FLOAT32, double(x)}; }
  static Value boolean(bool x) { return {ValueType::BOOL, x}; }
  static Value str(std::string s) { return {ValueType::STRING, std::move(s)}; }
  static Value array(ValueType elem, std::vector<Value> items) {
    return {ValueType::ARRAY, Array{elem, std::move(items)}};
  }
  static Value strings(const std::vector<std::string>& xs);
  static Value floats(const std::vector<float>& xs);
  static Value ints(const std::vector<int32_t>& xs);

  // Conversions; throw parley::Error when the value is not of a fitting kind.
  uint64_t as_uint() const;
  int64_t as_int() const;
  double as_float() const;
  bool as_bool() const;
  const std::string& as_string() const;
  const Array& as_array() const;

  bool operator==(const Value&) const = default;  // same type and same contents
};

// "UINT32", or "ARRAY of STRING" for arrays: for messages and listings.
std::string type_description(const Value& v);

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // dims[0] is the innermost (contiguous) dimension
  DType type = DType::F32;
  uint64_t offset = 0;         // relative to the data section
  const void* data = nullptr;  // points into the mapping
  uint64_t n_elements() const;
  uint64_t n_bytes() const;
};

// "64 x 512": dims innermost first, as in the file.
std::string shape_text(const std::vector<uint64_t>& dims);

class File {
 public:
  // Maps and parses `path`; throws parley::Error on any malformed content.
  static std::unique_ptr<File> open(const std::string& path);

  const std::string& path() const { return map_->path(); }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  const std::map<std::string, Value>& metadata() const { return metadata_; }
  const std::vector<std::string>& keys() const { return keys_; }  // metadata keys in file order
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

  const Value* find(const std::string& key) const;
  const TensorInfo* find_tensor(const std::string& name) const;

  // Drops the mapped pages of tensor data copied elsewhere (MappedFile::release).
  void release_pages(const void* p, size_t n) const { map_->release(p, n); }

  // Typed metadata look-ups. Without a default a missing key is an Error.
  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& dflt) const;
  uint64_t get_uint(const std::string& key) const;
  uint64_t get_uint(const std::string& key, uint64_t dflt) const;
  double get_float(const std::string& key, double dflt) const;
  bool get_bool(const std::string& key, bool dflt) const;
  std::vector<std::string> get_strings(const std::string& key) const;  // empty if absent
  std::vector<float> get_floats(const std::string& key) const;         // empty if absent
  std::vector<int32_t> get_ints(const std::string& key) const;         // empty if absent

 private:
  explicit File(std::unique_ptr<MappedFile> map) : map_(std::move(map)) {}
  void parse();

  std::unique_ptr<MappedFile> map_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::map<std::string, Value> metadata_;
  std::vector<std::string> keys_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;  // name -> position in tensors_
};

}  // namespace parley::gguf
