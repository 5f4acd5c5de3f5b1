#include "model/kv_cache.h"

#include <sys/mman.h>

#include <cstring>
#include <string>

#include "util/error.h"

namespace parley {

// Per block: [layer][K | V][KV head][slot][head_dim elements]. A head's rows
// of a block are contiguous, so attention reads each block as one stream.
KvCache::KvCache(const ModelConfig& c, DType type, int32_t block_size, int64_t n_blocks, Commit commit)
    : type_(type), block_size_(block_size), n_kv_heads_(c.n_kv_heads), n_blocks_(n_blocks) {
  check_type(c, type);
  if (block_size < 1 || n_blocks < 1)
    throw Error("KV cache: need at least one block of at least one slot (block size " + std::to_string(block_size) +
                ", " + std::to_string(n_blocks) + " blocks)");
  row_bytes_ = row_bytes(type, uint64_t(c.head_dim));
  head_bytes_ = row_bytes_ * size_t(block_size);
  layer_bytes_ = 2 * head_bytes_ * size_t(c.n_kv_heads);
  block_bytes_ = layer_bytes_ * size_t(c.n_layers);
  const bool now = commit == Commit::Now;
  data_ = AlignedBytes(block_bytes_ * size_t(n_blocks), now ? AlignedBytes::Init::Zero : AlignedBytes::Init::Lazy);
  committed_.assign(size_t(n_blocks), now);
  committed_count_ = now ? n_blocks : 0;
}

void KvCache::check_type(const ModelConfig& c, DType type) {
  if (type != DType::F32 && type != DType::F16 && type != DType::Q8_0)
    throw Error("KV cache type " + std::string(dtype_name(type)) + " is not supported (use f32, f16 or q8_0)");
  if (type == DType::Q8_0 && c.head_dim % 32 != 0)
    throw Error("KV cache type q8_0 needs a head size that is a multiple of 32; this model's is " +
                std::to_string(c.head_dim) + " (use f16 or f32)");
}

uint64_t KvCache::block_bytes(const ModelConfig& c, DType type, int32_t block_size) {
  return row_bytes(type, uint64_t(c.head_dim)) * uint64_t(c.n_kv_heads) * 2 * uint64_t(block_size) *
         uint64_t(c.n_layers);
}

PagedKv KvCache::layer(int32_t layer, const int32_t* blocks) const {
  PagedKv kv;
  kv.type = type_;
  kv.k = data_.data() + size_t(layer) * layer_bytes_;
  kv.v = kv.k + head_bytes_ * size_t(n_kv_heads_);
  kv.block_stride = block_bytes_;
  kv.slot_stride = row_bytes_;
  kv.head_stride = head_bytes_;
  kv.block_size = block_size_;
  kv.blocks = blocks;
  return kv;
}

uint8_t* KvCache::row(int32_t block, int32_t layer, int32_t kind, int32_t slot, int32_t head) {
  return data_.data() + size_t(block) * block_bytes_ + size_t(layer) * layer_bytes_ +
         (size_t(kind) * size_t(n_kv_heads_) + size_t(head)) * head_bytes_ + size_t(slot) * row_bytes_;
}

uint8_t* KvCache::k_row(int32_t block, int32_t layer, int32_t slot, int32_t head) {
  return row(block, layer, 0, slot, head);
}
uint8_t* KvCache::v_row(int32_t block, int32_t layer, int32_t slot, int32_t head) {
  return row(block, layer, 1, slot, head);
}

void KvCache::commit_block(int32_t block) {
  if (committed_[size_t(block)]) return;
  committed_[size_t(block)] = true;
  ++committed_count_;
  // The pages the block overlaps. A pool of 2 MiB or more is 2 MiB-aligned
  // and rounded up to 2 MiB, so they lie inside it; a smaller pool's edge
  // pages may belong to the heap around it, which populating leaves as it is
  // (unmapped ones make the call fail, which is ignored).
  constexpr uintptr_t kPage = 4096;
  const uintptr_t begin = uintptr_t(data_.data() + size_t(block) * block_bytes_) & ~(kPage - 1);
  const uintptr_t end = (uintptr_t(data_.data() + size_t(block + 1) * block_bytes_) + kPage - 1) & ~(kPage - 1);
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);  // advice: fine if refused
}

void KvCache::release_block(int32_t block) {
  if (!committed_[size_t(block)]) return;
  committed_[size_t(block)] = false;
  --committed_count_;
  // Only pages wholly inside the block: an edge page may hold a neighbour's rows.
  constexpr uintptr_t kPage = 4096;
  const uintptr_t begin = (uintptr_t(data_.data() + size_t(block) * block_bytes_) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = uintptr_t(data_.data() + size_t(block + 1) * block_bytes_) & ~(kPage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void KvCache::copy_block(int32_t dst, int32_t src) {
  std::memcpy(data_.data() + size_t(dst) * block_bytes_, data_.data() + size_t(src) * block_bytes_, block_bytes_);
}

}  // namespace parley
