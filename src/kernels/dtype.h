#pragma once
// Element types of weight tensors, numbered as in the GGUF file format
// (ggml's type ids), with their block layout.
#include <cstdint>
#include <optional>
#include <string_view>

namespace parley {

enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  IQ4_NL = 20,
  IQ4_XS = 23,
  BF16 = 30,
};

struct DTypeTraits {
  std::string_view name;
  int block_elems;  // elements per block (1 for float types)
  int block_bytes;  // bytes per block
};

// Traits of a supported type; nullopt for ids this build cannot compute with.
std::optional<DTypeTraits> dtype_traits(uint32_t id);
const DTypeTraits& traits(DType t);
inline std::string_view dtype_name(DType t) { return traits(t).name; }
std::optional<DType> dtype_from_name(std::string_view name);  // "q8_0", "Q4_K", ...

// Bytes of one row of n elements; n must be a multiple of the block size.
inline uint64_t row_bytes(DType t, uint64_t n) {
  const auto& tr = traits(t);
  return n / uint64_t(tr.block_elems) * uint64_t(tr.block_bytes);
}

}  // namespace parley
