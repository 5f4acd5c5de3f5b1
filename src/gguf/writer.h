#pragma once
// GGUF v3 writer: metadata in insertion order, tensors aligned to
// general.alignment (default 32), exactly as the specification lays them out.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf.h"

namespace parley::gguf {

class Writer {
 public:
  void set(const std::string& key, Value value);  // replaces an existing key
  // `data` must hold row_bytes(type, dims[0]) * (product of the other dims) bytes.
  void add_tensor(const std::string& name, DType type, std::vector<uint64_t> dims,
                  std::vector<uint8_t> data);
  void write(const std::string& path) const;  // throws parley::Error

 private:
  struct PendingTensor {
    std::string name;
    DType type;
    std::vector<uint64_t> dims;
    std::vector<uint8_t> data;
  };
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace parley::gguf
