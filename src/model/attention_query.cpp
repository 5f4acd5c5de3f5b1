#include "model/attention_query.h"

#include <algorithm>
#include <cmath>

namespace parley {

AttentionQuery causal_query(const ModelConfig& c, int32_t layer, const float* q, float* att, size_t token,
                            int32_t kv_head, int32_t pos) {
  const int32_t group = c.n_heads / c.n_kv_heads;
  const size_t offset = token * size_t(c.q_dim()) + size_t(kv_head) * size_t(group) * size_t(c.head_dim);
  AttentionQuery a;
  a.q = q + offset;
  a.out = att + offset;
  a.group = group;
  a.head_dim = c.head_dim;
  a.kv_head = kv_head;
  const int32_t window = c.window_of(layer);
  a.first = window > 0 ? std::max(0, pos - window + 1) : 0;
  a.end = pos + 1;
  a.scale = c.attn_scale > 0.0f ? c.attn_scale : 1.0f / std::sqrt(float(c.head_dim));
  a.softcap = c.attn_softcap;
  return a;
}

bool tile_attention(const Model& model, int32_t n_tokens) {
  constexpr int32_t kMinTileTokens = 16;
  const ModelConfig& c = model.config();
  return n_tokens >= kMinTileTokens && c.sliding_window <= 0 && c.attn_softcap <= 0.0f &&
         model.packed_bytes() > 0 &&
         prefill_attention_fits(c.head_dim);
}

PrefillAttention prefill_query(const ModelConfig& c, int32_t layer, const float* q, float* att, size_t token,
                               int32_t n, int32_t kv_head, int32_t pos) {
  const AttentionQuery one = causal_query(c, layer, q, att, token, kv_head, pos);
  PrefillAttention p;
  p.q = q + token * size_t(c.q_dim());
  p.out = att + token * size_t(c.q_dim());
  p.q_stride = c.q_dim();
  p.n_tokens = n;
  p.first_pos = pos;
  p.group = one.group;
  p.head_dim = c.head_dim;
  p.kv_head = kv_head;
  p.scale = one.scale;
  return p;
}

}  // namespace parley
