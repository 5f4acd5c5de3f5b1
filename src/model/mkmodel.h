#pragma once
// Writes complete GGUF models with seeded random weights and real shapes, for
// tests and benchmarks of architectures we have no pretrained file for.
#include <cstdint>
#include <string>

#include "kernels/dtype.h"

namespace parley {

struct MkModelSpec {
  // llama | llama3 | tinyllama | mistral | qwen2 | qwen3 | gemma2 | gemma3 | phi3 | mixtral | qwen2moe | qwen3moe | olmoe
  std::string arch = "llama";
  int32_t dim = 64;
  int32_t n_layers = 2;
  int32_t n_heads = 4;
  int32_t n_kv_heads = 0;      // 0 = n_heads
  int32_t head_dim = 0;        // 0 = dim / n_heads
  int32_t ffn_dim = 0;         // 0 = a SwiGLU-style multiple of 32 near 8/3 dim; each expert's with experts
  int32_t n_experts = 0;       // mixture-of-experts FFN (the MoE archs need it): experts per block
  int32_t n_experts_used = 0;  // experts per token (0 = 2)
  int32_t shared_expert_ffn = 0;  // qwen2moe's shared expert width (0 = 4x ffn)
  int32_t context_length = 512;
  int32_t vocab_size = 0;      // 0 = the vocabulary file's size; larger pads with unused tokens
  int32_t sliding_window = 0;  // when 0: mistral and gemma2 4096, gemma3 512
  bool tied_output = false;
  float attn_softcap = 50.0f;  // gemma2: {arch}.attn_logit_softcapping
  float final_softcap = 30.0f; // gemma2: {arch}.final_logit_softcapping
  int32_t rope_dim = 0;        // rotated dims per head (partial rotary, Phi-4-mini); 0 = head_dim
  // phi3: LongRoPE factors and this original context when it is below the
  // context length (0: 4096, as Phi-3-mini-128k and Phi-3.5-mini); with yarn_factor: YaRN's.
  int32_t original_context = 0;
  float yarn_factor = 0.0f;    // > 0: rope.scaling.type yarn with this factor
  DType type = DType::F32;     // type of the 2-D weight matrices
  std::string vocab_from;      // GGUF whose tokenizer.* metadata is copied
  std::string chat_template;   // tokenizer.chat_template to write (empty: vocab_from's, if any)
  uint64_t seed = 1;
  std::string name;            // general.name (default: derived)
};

// Applies a named preset (e.g. "llama-110m") on top of `spec`; false if unknown.
bool apply_preset(const std::string& preset, MkModelSpec& spec);
std::string preset_names();

// Writes the model; throws parley::Error on bad specs or I/O failure.
void write_random_model(const MkModelSpec& spec, const std::string& out_path);

}  // namespace parley
