#pragma once
// Hyper-parameters of a decoder-only transformer, read from GGUF metadata or
// a llama2.c header. One forward pass serves every supported architecture;
// the differences are these fields (a family's fixed traits: model/arch.h).
#include <cstdint>
#include <string>
#include <vector>

#include "model/moe_config.h"

namespace parley {
namespace gguf { class File; }

enum class RopeStyle {
  Interleaved,  // rotate pairs (2i, 2i+1): Llama/Mistral GGUF and llama2.c
  Neox,         // rotate pairs (i, i + d/2): Qwen2/Qwen3
};

// The activation of the gated FFN: act(gate) * up.
enum class FfnActivation {
  Silu,      // SwiGLU: Llama, Mistral, Qwen, Phi-3
  GeluTanh,  // GeGLU with the tanh approximation of GELU: Gemma 2/3
};

// How a sequence's final hidden states become one embedding; the values are
// GGUF's {arch}.pooling_type.
enum class Pooling : int32_t { None = 0, Mean = 1, Cls = 2, Last = 3 };

struct ModelConfig {
  std::string arch = "llama";  // general.architecture
  int32_t dim = 0;             // embedding width
  int32_t n_layers = 0;
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;      // grouped-query attention when < n_heads
  int32_t head_dim = 0;        // usually dim / n_heads (Qwen3 may differ)
  int32_t ffn_dim = 0;
  int32_t vocab_size = 0;
  int32_t context_length = 0;
  float norm_eps = 1e-5f;
  float rope_base = 10000.0f;
  float rope_scale = 1.0f;     // linear position scaling (positions divided by this)
  // Beyond linear scaling (model/rope_scaling.h): the original training
  // context (LongRoPE's and YaRN's), the cos/sin magnitude (LongRoPE), YaRN.
  int32_t rope_orig_context = 0;
  float rope_attn_factor = 1.0f;
  float yarn_factor = 0.0f;    // 0: no YaRN
  float yarn_beta_fast = 32.0f, yarn_beta_slow = 1.0f;
  int32_t rope_dim = 0;        // dimensions rotated per head (== head_dim unless partial)
  RopeStyle rope_style = RopeStyle::Interleaved;
  int32_t sliding_window = 0;  // 0 = full attention (Mistral: 4096)
  // Which layers the window applies to: all when <= 1, else layer l when
  // l % pattern < pattern - 1 (Gemma 2: 2, even layers; Gemma 3: 6, five of six).
  int32_t sliding_window_pattern = 1;
  std::vector<bool> swa_layers;  // the pattern as per-layer flags (true: windowed), when the file gives them
  float rope_base_swa = 0.0f;  // rope base of windowed layers, unscaled (Gemma 3: 10000); 0 = as global
  FfnActivation ffn_act = FfnActivation::Silu;
  float embd_scale = 1.0f;     // token embeddings are multiplied by this (Gemma: sqrt(dim))
  float attn_scale = 0.0f;     // q.k multiplier; 0 = 1/sqrt(head_dim)
  float attn_softcap = 0.0f;   // Gemma 2: scores become cap * tanh(score / cap); 0 = off
  float final_softcap = 0.0f;  // Gemma 2: the same on the output logits
  bool post_norms = false;     // Gemma 2/3: RMSNorm of the attention and FFN outputs before the residual add
  bool fused = false;          // Phi-3: attn_qkv (Q, K, V rows) and ffn_up (gate rows, then up rows) tensors
  bool qkv_bias = false;       // Qwen2
  bool qk_norm = false;        // Qwen3: RMSNorm per head on Q and K
  bool qk_norm_whole = false;  // OLMoE: the Q and K norms span whole rows (from the norms' shape)
  bool tied_output = false;    // output projection shares token_embd
  Pooling pooling = Pooling::None;  // {arch}.pooling_type: an embedding model's own pooling
  MoeConfig moe;               // mixture-of-experts FFN, when moe.enabled()

  // The window of layer l's attention (0: full).
  int32_t window_of(int32_t l) const {
    if (!swa_layers.empty()) return size_t(l) < swa_layers.size() && swa_layers[size_t(l)] ? sliding_window : 0;
    const bool windowed = sliding_window_pattern <= 1 || l % sliding_window_pattern < sliding_window_pattern - 1;
    return windowed ? sliding_window : 0;
  }
  int32_t q_dim() const { return n_heads * head_dim; }
  int32_t kv_dim() const { return n_kv_heads * head_dim; }
  void validate(const std::string& source) const;  // throws parley::Error
};

// Reads {arch}.* keys; the caller fills tensor-dependent fields (tied_output,
// qkv_bias when present as tensors) via the weights loader.
ModelConfig config_from_gguf(const gguf::File& file);

}  // namespace parley
