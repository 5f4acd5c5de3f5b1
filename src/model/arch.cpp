#include "model/arch.h"

#include <array>

namespace parley {
namespace {

constexpr std::array<ArchTraits, 4> kArchs = {{
    // name    rope style              qk_norm
    {"llama", RopeStyle::Interleaved, false},
    {"mistral", RopeStyle::Interleaved, false},
    {"qwen2", RopeStyle::Neox, false},
    {"qwen3", RopeStyle::Neox, true},
}};

}  // namespace

std::span<const ArchTraits> supported_archs() { return kArchs; }

const ArchTraits* find_arch(std::string_view name) {
  for (const ArchTraits& a : kArchs)
    if (a.name == name) return &a;
  return nullptr;
}

std::string supported_arch_names() {
  std::string out;
  for (size_t i = 0; i < kArchs.size(); ++i)
    out += (i == 0 ? "" : i + 1 == kArchs.size() ? " or " : ", ") + std::string(kArchs[i].name);
  return out;
}

}  // namespace parley
