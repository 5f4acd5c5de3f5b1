#pragma once
// Paged K/V storage shared by every sequence of a model: one pool of
// fixed-size blocks, each holding `block_size` token slots of every layer's
// K and V rows in F32, F16 or Q8_0. Which blocks a sequence owns is the
// engine's business (block tables); this class only lays the bytes out.
#include <cstdint>
#include <vector>

#include "kernels/attention.h"
#include "model/config.h"
#include "util/aligned_bytes.h"

namespace parley {

class KvCache {
 public:
  // When the pool's memory is committed: as each block is first used
  // (commit_block), or all of it here, zeroed (on huge pages where the
  // kernel gives them).
  enum class Commit { OnFirstUse, Now };
  // Throws parley::Error for an unsupported type (Q8_0 needs head_dim % 32 == 0).
  KvCache(const ModelConfig& c, DType type, int32_t block_size, int64_t n_blocks,
          Commit commit = Commit::OnFirstUse);

  static void check_type(const ModelConfig& c, DType type);
  static uint64_t block_bytes(const ModelConfig& c, DType type, int32_t block_size);

  // One layer's K/V rows of a sequence whose block table is `blocks`.
  PagedKv layer(int32_t layer, const int32_t* blocks) const;
  // The row of KV head `head` at `slot` (within the block).
  uint8_t* k_row(int32_t block, int32_t layer, int32_t slot, int32_t head);
  uint8_t* v_row(int32_t block, int32_t layer, int32_t slot, int32_t head);
  void copy_block(int32_t dst, int32_t src);  // every layer's rows (copy-on-write)
  // Commits a block's pages before its first use, in one madvise
  // (MADV_POPULATE_WRITE) rather than a page fault per 4 KiB as rows are
  // written: in a VM each fault is a costly trap, and a serving batch writes
  // rows into fresh blocks every step until the whole pool has been used.
  // Later calls for the block do nothing; without kernel support (Linux <
  // 5.14) the pages fault in as before.
  void commit_block(int32_t block);
  // Gives a free block's pages back to the OS (MADV_DONTNEED on the whole
  // pages inside it; they read as zeros): the memory watchdog's way to shrink
  // the process once the prefix cache is dropped. The block's contents are
  // gone; it is committed again on its next use.
  void release_block(int32_t block);
  bool committed(int32_t block) const { return committed_[size_t(block)]; }
  int64_t committed_blocks() const { return committed_count_; }

  DType type() const { return type_; }
  int32_t block_size() const { return block_size_; }
  int64_t n_blocks() const { return n_blocks_; }
  uint64_t bytes() const { return uint64_t(n_blocks_) * block_bytes_; }

 private:
  uint8_t* row(int32_t block, int32_t layer, int32_t kind, int32_t slot, int32_t head);

  DType type_;
  int32_t block_size_;
  int32_t n_kv_heads_;
  int64_t n_blocks_;
  size_t row_bytes_, head_bytes_, layer_bytes_, block_bytes_;
  // Lazy: the pool's pages are committed as blocks are first used.
  AlignedBytes data_;
  std::vector<bool> committed_;
  int64_t committed_count_ = 0;
};

}  // namespace parley
