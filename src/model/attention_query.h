#pragma once
// The attention of one token's query heads that share KV head `kv_head`, at
// position `pos`, in layer `layer`: causal and within the layer's sliding
// window, if it has one.
// BatchForward's q/att buffers are [token][q_dim].
#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"
#include "kernels/attention_prefill.h"
#include "model/config.h"
#include "model/model.h"

namespace parley {

AttentionQuery causal_query(const ModelConfig& c, int32_t layer, const float* q, float* att, size_t token,
                            int32_t kv_head, int32_t pos);

// Whether n query tokens of one sequence attend in bf16 tiles
// (kernels/attention_prefill.h): on a CPU with AMX or AVX512-BF16, from 16 tokens on (a tile
// holds 16 query rows), without a sliding window or soft-capping, and only for models whose
// weights are repacked 8- or 4-bit quants: their results are approximate
// already, while F32, F16 and BF16 models keep fp32 attention (which the
// reference tests hold to 1e-4; bf16 operands move logits by ~3e-3).
bool tile_attention(const Model& model, int32_t n_tokens);

// Tokens [token, token + n) at positions pos.. of the [token][q_dim] buffers,
// for the query heads of KV head `kv_head`.
PrefillAttention prefill_query(const ModelConfig& c, int32_t layer, const float* q, float* att, size_t token,
                               int32_t n, int32_t kv_head, int32_t pos);

}  // namespace parley
