#pragma once
// A token's choice of experts: the softmax over its router logits, then the
// k most probable experts (ties to the lower index), their weights the
// softmax probabilities, renormalised to sum to 1 when `norm_top_k`.
#include <cstdint>

namespace parley {

// ids[j], weights[j] for j < k, in decreasing weight.
void route_token(const float* logits, int32_t n_experts, int32_t k, bool norm_top_k, int32_t* ids, float* weights);

}  // namespace parley
