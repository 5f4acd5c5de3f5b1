#pragma once
// Attention of one query token over a paged K/V cache: a fused, single-pass
// (online softmax: running max and sum) kernel that reads K/V rows straight
// from fixed-size blocks of F32, F16 or Q8_0, and serves all the query heads
// that share one KV head (grouped-query attention) with each row it reads.
#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace parley {

// Largest head_dim and query heads per KV head the kernel handles.
constexpr int32_t kMaxAttentionHeadDim = 512;
constexpr int32_t kMaxAttentionGroup = 64;

// One layer's K and V rows of one sequence. Slot s lives in block
// blocks[s / block_size] at index s % block_size; a slot holds one row per KV
// head for K and for V.
struct PagedKv {
  DType type = DType::F32;     // F32, F16 or Q8_0 (Q8_0 needs head_dim % 32 == 0)
  const uint8_t* k = nullptr;  // K row of KV head 0, slot 0, block 0 of this layer
  const uint8_t* v = nullptr;  // likewise for V
  size_t block_stride = 0;     // bytes from a block to the next
  size_t slot_stride = 0;      // bytes from a slot to the next within a block
  size_t head_stride = 0;      // bytes from a KV head's row to the next
  int32_t block_size = 0;      // slots per block
  const int32_t* blocks = nullptr;

  // Where head's rows of the i-th block of the table start, from k (K) and v (V).
  size_t block_offset(int32_t i, int32_t head) const {
    return size_t(blocks[i]) * block_stride + size_t(head) * head_stride;
  }
  // Where (slot, head)'s K row lies from k, and its V row from v.
  size_t row_offset(int32_t slot, int32_t head) const {
    return block_offset(slot / block_size, head) + size_t(slot % block_size) * slot_stride;
  }
};

// Key rotation at read time, for caches that store keys without RoPE
// (retention policies, where a kept token's position changes as others go).
// Slots are then attended by position, not by index: a slot counts when
// min_pos <= slot_pos[slot] <= max_pos (empty slots hold -1).
struct KeyRotation {
  const int32_t* slot_pos = nullptr;
  void (*rotate)(const void* ctx, float* key, int32_t pos) = nullptr;
  const void* ctx = nullptr;
};

struct AttentionQuery {
  const float* q = nullptr;  // kv_heads x group query heads of head_dim floats, contiguous
  float* out = nullptr;      // kv_heads x group x head_dim: the attention output
  int32_t group = 1;         // query heads sharing each KV head
  int32_t head_dim = 0;
  int32_t kv_head = 0;
  // KV heads kv_head.. attended in one pass, a tile of slots at a time for
  // all of them: a block holds their rows side by side, so the pass reads
  // the block's memory in order (kv_heads x group <= kMaxAttentionGroup).
  int32_t kv_heads = 1;
  int32_t first = 0, end = 0;  // the slots attended: [first, end), end > first
  float scale = 1.0f;          // applied to q.k
  float softcap = 0.0f;        // > 0: scaled scores become softcap * tanh(score / softcap) (Gemma 2)
  const KeyRotation* rotation = nullptr;  // null: keys are stored rotated
  int32_t min_pos = 0, max_pos = 0;       // with `rotation`: the positions attended
  // Optional, group x (end - first) floats: receives each head's attention
  // weights (heavy-hitter accounting; only with kv_heads == 1).
  float* weights = nullptr;
};

void paged_attention(const PagedKv& kv, const AttentionQuery& query);

// Row conversions for the cache (n a multiple of the type's block size):
// what the kernel uses to read rows, and what writers use to store them.
void kv_row_to_float(DType type, const uint8_t* src, float* dst, int32_t n);
void kv_row_from_float(DType type, const float* src, uint8_t* dst, int32_t n);

}  // namespace parley
