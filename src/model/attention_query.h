#pragma once
// The attention of one token's query heads that share KV head `kv_head`, at
// position `pos`: causal and within the model's sliding window, if it has one.
// Shared by Forward and BatchForward, whose q/att buffers are [token][q_dim].
#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"
#include "model/config.h"

namespace parley {

AttentionQuery causal_query(const ModelConfig& c, const float* q, float* att, size_t token, int32_t kv_head,
                            int32_t pos);

}  // namespace parley
