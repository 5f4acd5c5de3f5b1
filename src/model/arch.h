#pragma once
// The architecture families the one forward pass (BatchForward) runs, as
// rows of traits. The loader copies a family's row into ModelConfig, which is
// all the pass reads: a family that differs from another only in these traits
// is one more row here; a new kind of block, norm or activation (Gemma's
// soft-capping, a mixture-of-experts FFN) is a new column and its branch in
// the pass, never a copy of it.
#include <span>
#include <string>
#include <string_view>

#include "model/config.h"

namespace parley {

struct ArchTraits {
  std::string_view name;  // general.architecture
  RopeStyle rope_style;   // which dimension pairs RoPE rotates
  bool qk_norm;           // RMSNorm per head on Q and K before RoPE (the file must have the norms)
  bool moe_norm_top_k = true;  // with {arch}.expert_count: renormalise the top-k router weights (moe_config.h)
  FfnActivation ffn_act = FfnActivation::Silu;
  bool scale_embd = false;   // embeddings times sqrt(dim)
  bool softcap = false;      // {arch}.attn_logit_softcapping and final_logit_softcapping required
  bool post_norms = false;   // post_attention_norm / post_ffw_norm tensors required
  bool fused = false;        // attn_qkv and ffn_up of gate and up rows instead of separate tensors
  // Default of {arch}.attention.sliding_window_pattern, and the rope base of
  // windowed layers when {arch}.rope.freq_base_swa is absent (0: as global).
  int32_t sliding_window_pattern = 1;
  float rope_base_swa = 0.0f;
  int32_t sliding_window = 0;  // when {arch}.attention.sliding_window is absent (Gemma 2: 4096)
  // What the loader honours for every family, from the file: grouped-query
  // attention, Q/K/V biases when present (Qwen2 always has them), a tied
  // output matrix when output.weight is absent, rope_freqs.weight (Llama 3
  // scaling), linear and YaRN rope scaling, LongRoPE factors
  // (rope_factors_long/short.weight), partial rotary dimensions and
  // {arch}.attention.sliding_window (Mistral's, on every layer).
};

std::span<const ArchTraits> supported_archs();
// nullptr for an architecture the pass does not run.
const ArchTraits* find_arch(std::string_view name);
// "llama, mistral, ... or olmoe": for error messages.
std::string supported_arch_names();

}  // namespace parley
