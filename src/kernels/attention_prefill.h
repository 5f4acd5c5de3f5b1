#pragma once
// Causal attention of a run of query tokens (a prefill chunk) on bf16
// operands, flash-attention style: the KV head's keys and values are
// converted once per call into tile layouts (K transposed, V in key pairs),
// then every tile of 16 query rows (a token's group of query heads, token
// after token) takes its scores for 32 keys at a time, an online softmax in
// AVX-512 and P x V. The products run on AMX tiles (tdpbf16ps) where the CPU
// has them, else on AVX512-BF16 vectors (vdpbf16ps) over the same layouts.
// Queries, keys, values and the weights P are rounded to bf16 (8 significant
// bits); scores and sums stay fp32.
#include <cstdint>

#include "kernels/attention.h"

namespace parley {

struct PrefillAttention {
  const float* q = nullptr;  // query head h of token t at q + t * q_stride + h * head_dim
  float* out = nullptr;      // the same layout
  int64_t q_stride = 0;
  int32_t n_tokens = 0;
  int32_t first_pos = 0;  // token t sits at position first_pos + t and attends to slots [0, that position]
  int32_t group = 1;      // query heads kv_head * group .. of KV head kv_head
  int32_t head_dim = 0;
  int32_t kv_head = 0;
  float scale = 1.0f;
};

// Whether prefill_attention() serves this shape on this CPU: head_dim a
// multiple of 32, at most 256, and the AMX path active or, on the AVX-512
// paths, AVX512-BF16 present.
bool prefill_attention_fits(int32_t head_dim);

// Slot s of the cache holds position s (no retention policy, no window).
// Scratch is owned by the calling thread (grow-only).
void prefill_attention(const PagedKv& kv, const PrefillAttention& a);

}  // namespace parley
