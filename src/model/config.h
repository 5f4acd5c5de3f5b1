#pragma once
// Hyper-parameters of a decoder-only transformer, read from GGUF metadata or
// a llama2.c header. One forward pass serves every supported architecture;
// the differences are these fields (a family's fixed traits: model/arch.h).
#include <cstdint>
#include <string>

#include "model/moe_config.h"

namespace parley {
namespace gguf { class File; }

enum class RopeStyle {
  Interleaved,  // rotate pairs (2i, 2i+1): Llama/Mistral GGUF and llama2.c
  Neox,         // rotate pairs (i, i + d/2): Qwen2/Qwen3
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
  int32_t rope_dim = 0;        // dimensions rotated per head (== head_dim unless partial)
  RopeStyle rope_style = RopeStyle::Interleaved;
  int32_t sliding_window = 0;  // 0 = full attention (Mistral: 4096)
  bool qkv_bias = false;       // Qwen2
  bool qk_norm = false;        // Qwen3: RMSNorm per head on Q and K
  bool qk_norm_whole = false;  // OLMoE: the Q and K norms span whole rows (from the norms' shape)
  bool tied_output = false;    // output projection shares token_embd
  Pooling pooling = Pooling::None;  // {arch}.pooling_type: an embedding model's own pooling
  MoeConfig moe;               // mixture-of-experts FFN, when moe.enabled()

  int32_t q_dim() const { return n_heads * head_dim; }
  int32_t kv_dim() const { return n_kv_heads * head_dim; }
  void validate(const std::string& source) const;  // throws parley::Error
};

// Reads {arch}.* keys; the caller fills tensor-dependent fields (tied_output,
// qkv_bias when present as tensors) via the weights loader.
ModelConfig config_from_gguf(const gguf::File& file);

}  // namespace parley
