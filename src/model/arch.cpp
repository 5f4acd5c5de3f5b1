#include "model/arch.h"

#include <array>

namespace parley {
namespace {

// Mixtral is "llama" with {arch}.expert_count.
constexpr std::array<ArchTraits, 10> kArchs = {{
    {.name = "llama", .rope_style = RopeStyle::Interleaved, .qk_norm = false},
    {.name = "mistral", .rope_style = RopeStyle::Interleaved, .qk_norm = false},
    {.name = "qwen2", .rope_style = RopeStyle::Neox, .qk_norm = false, .moe_norm_top_k = false},
    {.name = "qwen3", .rope_style = RopeStyle::Neox, .qk_norm = true},
    {.name = "qwen2moe", .rope_style = RopeStyle::Neox, .qk_norm = false, .moe_norm_top_k = false},
    {.name = "qwen3moe", .rope_style = RopeStyle::Neox, .qk_norm = true},
    // OLMoE's Q/K norms span whole rows (qk_norm_whole, detected from their shape).
    {.name = "olmoe", .rope_style = RopeStyle::Neox, .qk_norm = true, .moe_norm_top_k = false},
    // Gemma 2: local (windowed) and global layers alternate, even ones local.
    {.name = "gemma2", .rope_style = RopeStyle::Neox, .qk_norm = false, .ffn_act = FfnActivation::GeluTanh,
     .scale_embd = true, .softcap = true, .post_norms = true, .sliding_window_pattern = 2, .sliding_window = 4096},
    // Gemma 3: five local layers (rope base 10000, unscaled) then a global one.
    {.name = "gemma3", .rope_style = RopeStyle::Neox, .qk_norm = true, .ffn_act = FfnActivation::GeluTanh,
     .scale_embd = true, .post_norms = true, .sliding_window_pattern = 6, .rope_base_swa = 10000.0f},
    // Phi-3, 3.5 and 4-mini: fused tensors, LongRoPE factors when the file has them.
    {.name = "phi3", .rope_style = RopeStyle::Neox, .qk_norm = false, .fused = true},
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
