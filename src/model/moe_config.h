#pragma once
// The mixture-of-experts part of a model's configuration: each block's FFN is
// n_experts SwiGLU experts of which a router picks n_used per token (and, in
// Qwen2-MoE, a shared expert every token goes through). n_experts == 0: a
// dense FFN. Read from GGUF as llama.cpp's converter writes it.
#include <cstdint>
#include <string>

namespace parley {
namespace gguf { class File; }

struct MoeConfig {
  int32_t n_experts = 0;         // {arch}.expert_count
  int32_t n_used = 0;            // {arch}.expert_used_count: experts per token
  int32_t expert_ffn_dim = 0;    // {arch}.expert_feed_forward_length, else feed_forward_length
  int32_t shared_ffn_dim = 0;    // {arch}.expert_shared_feed_forward_length; 0: no shared expert
  // Renormalise the top-k softmax weights to sum to 1 (Mixtral, Qwen3-MoE)
  // or keep them as the softmax over all experts gave them (Qwen2-MoE, OLMoE).
  bool norm_top_k = false;

  bool enabled() const { return n_experts > 0; }
};

// Reads the {arch}.expert_* keys; `norm_top_k` is the family's trait and
// `ffn_dim` its feed_forward_length. Throws parley::Error naming the key of
// an inconsistent value.
MoeConfig moe_config_from_gguf(const gguf::File& f, const std::string& arch, bool norm_top_k, int32_t ffn_dim);

}  // namespace parley
