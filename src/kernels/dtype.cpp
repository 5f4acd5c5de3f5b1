#include "kernels/dtype.h"

#include <array>
#include <cctype>
#include <string>

#include "util/error.h"

namespace parley {
namespace {

struct Entry {
  DType type;
  DTypeTraits traits;
};

constexpr std::array<Entry, 15> kTypes = {{
    {DType::F32, {"F32", 1, 4}},
    {DType::F16, {"F16", 1, 2}},
    {DType::BF16, {"BF16", 1, 2}},
    {DType::Q8_0, {"Q8_0", 32, 34}},    // f16 d, int8 q[32]
    {DType::Q4_0, {"Q4_0", 32, 18}},    // f16 d, nibbles[16]
    {DType::Q4_1, {"Q4_1", 32, 20}},    // f16 d, f16 m, nibbles[16]
    {DType::Q5_0, {"Q5_0", 32, 22}},    // f16 d, qh[4], nibbles[16]
    {DType::Q5_1, {"Q5_1", 32, 24}},    // f16 d, f16 m, qh[4], nibbles[16]
    {DType::Q4_K, {"Q4_K", 256, 144}},  // f16 d, f16 dmin, scales[12], qs[128]
    {DType::Q5_K, {"Q5_K", 256, 176}},  // f16 d, f16 dmin, scales[12], qh[32], qs[128]
    {DType::Q6_K, {"Q6_K", 256, 210}},  // ql[128], qh[64], int8 scales[16], f16 d
    {DType::Q2_K, {"Q2_K", 256, 84}},   // scales[16], qs[64], f16 d, f16 dmin
    {DType::Q3_K, {"Q3_K", 256, 110}},  // hmask[32], qs[64], scales[12], f16 d
    {DType::IQ4_NL, {"IQ4_NL", 32, 18}},    // f16 d, nibbles[16]
    {DType::IQ4_XS, {"IQ4_XS", 256, 136}},  // f16 d, scales_h, scales_l[4], nibbles[128]
}};

}  // namespace

std::optional<DTypeTraits> dtype_traits(uint32_t id) {
  for (const auto& e : kTypes)
    if (uint32_t(e.type) == id) return e.traits;
  return std::nullopt;
}

const DTypeTraits& traits(DType t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e.traits;
  throw Error("unsupported tensor type id " + std::to_string(uint32_t(t)));
}

std::optional<DType> dtype_from_name(std::string_view name) {
  std::string upper(name);
  for (auto& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& e : kTypes)
    if (e.traits.name == upper) return e.type;
  return std::nullopt;
}

}  // namespace parley
