#pragma once
// Views of a model's tensors. Matrices point into the memory-mapped file
// (zero-copy); small vectors (norms, biases) are kept as owned F32 copies.
#include <cstdint>
#include <vector>

#include "kernels/matmul.h"
#include "model/moe_weights.h"

namespace parley {

struct LayerWeights {
  const float* attn_norm = nullptr;
  MatrixView wq, wk, wv, wo;
  const float* bq = nullptr;  // QKV biases (Qwen2), else null
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* q_norm = nullptr;  // per-head RMSNorm weights (Qwen3), else null
  const float* k_norm = nullptr;
  const float* ffn_norm = nullptr;
  MatrixView w_gate, w_up, w_down;  // dense FFN, else empty
  MoeWeights moe;                   // mixture-of-experts FFN (config.moe), else empty
  const float* post_attn_norm = nullptr;  // norms of the attention and FFN outputs (Gemma 2/3), else null
  const float* post_ffn_norm = nullptr;
};

struct Weights {
  MatrixView token_embd;  // vocab_size rows of dim
  const float* output_norm = nullptr;
  MatrixView output;      // == token_embd when tied
  const float* rope_freqs = nullptr;  // Llama 3 per-frequency divisors, or null
  const float* rope_long = nullptr;   // LongRoPE divisors past / within the original context (Phi-3), or null
  const float* rope_short = nullptr;
  std::vector<LayerWeights> layers;
  std::vector<std::vector<float>> owned;  // storage of the float vectors above

  const float* keep(std::vector<float> v) {
    owned.push_back(std::move(v));
    return owned.back().data();
  }
};

}  // namespace parley
