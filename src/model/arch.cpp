#include "model/arch.h"

#include <array>

namespace parley {
namespace {

// Mixtral is "llama" with {arch}.expert_count.
constexpr std::array<ArchTraits, 7> kArchs = {{
    // name    rope style              qk_norm  moe_norm_top_k
    {"llama", RopeStyle::Interleaved, false, true},
    {"mistral", RopeStyle::Interleaved, false, true},
    {"qwen2", RopeStyle::Neox, false, false},
    {"qwen3", RopeStyle::Neox, true, true},
    {"qwen2moe", RopeStyle::Neox, false, false},
    {"qwen3moe", RopeStyle::Neox, true, true},
    {"olmoe", RopeStyle::Neox, true, false},  // its Q/K norms span whole rows (qk_norm_whole)
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
