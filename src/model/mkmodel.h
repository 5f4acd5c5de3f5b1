#pragma once
// Writes complete GGUF models with seeded random weights and real shapes, for
// tests and benchmarks of architectures we have no pretrained file for.
#include <cstdint>
#include <string>

#include "kernels/dtype.h"

namespace parley {

struct MkModelSpec {
  std::string arch = "llama";  // llama | llama3 | tinyllama | mistral | qwen2 | qwen3 | mixtral | qwen2moe | qwen3moe | olmoe
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
  int32_t sliding_window = 0;  // mistral default 4096 when 0
  bool tied_output = false;
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
