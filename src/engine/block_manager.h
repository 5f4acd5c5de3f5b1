#pragma once
// Accounting of the paged KV pool: reference-counted blocks, a free list,
// per-sequence block tables, and automatic prefix caching. A full block is
// identified by hash(parent block's hash, its tokens); blocks of finished
// sequences keep their contents and stay findable until their memory is
// needed (least recently freed first). A shared block about to be written is
// copied first (copy-on-write). No allocation after construction.
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/block_hash_map.h"

namespace parley {

// A sequence's blocks: slot s of the sequence is slot s % block_size of
// blocks[s / block_size]. hashes[i] is the hash of full block i (i < hashes.size()).
// `root` stands for the first block's parent: what the K/V depends on besides
// the tokens (the LoRA adapter's id; 0 for the base model), so that no block
// is shared between sequences that computed it differently.
struct BlockTable {
  std::vector<int32_t> blocks;
  std::vector<uint64_t> hashes;
  uint64_t root = 0;
};

class BlockManager {
 public:
  BlockManager(int32_t n_blocks, int32_t block_size, bool prefix_cache);

  // Copies a block's K/V contents (the engine wires it to KvCache::copy_block).
  void set_copy(std::function<void(int32_t dst, int32_t src)> copy) { copy_ = std::move(copy); }
  // Called with every block taken from the free list, before it is written
  // (the engine wires it to KvCache::commit_block).
  void set_on_allocate(std::function<void(int32_t block)> fn) { on_allocate_ = std::move(fn); }

  // Prefix caching: how many leading full blocks of tokens[0, n) are cached
  // under `root` (BlockTable::root).
  // The match is remembered for take_prefix(); `free_hits` says how many of
  // those blocks sit in the free list (taking them leaves fewer free).
  int32_t match_prefix(const int32_t* tokens, int32_t n, int32_t* free_hits, uint64_t root = 0);
  void take_prefix(BlockTable& table);  // appends the last match's blocks (table empty, of the match's root)
  // The hash of the first full block the last match_prefix() did not find
  // (0 when every full block was found).
  uint64_t missed_hash() const { return missed_; }
  // The hash the next full block of a sequence will have once computed (0
  // when tokens[0, n) holds no further full block).
  uint64_t next_block_hash(const BlockTable& table, const int32_t* tokens, int32_t n) const;

  // Makes slots [first, end) writable: allocates missing blocks and copies
  // shared ones. All or nothing: false (no change) when blocks run short.
  bool reserve(BlockTable& table, int32_t first, int32_t end);
  // Blocks reserve() would take from the free list.
  int32_t blocks_needed(const BlockTable& table, int32_t first, int32_t end) const;
  // Registers the full blocks among slots [0, n_computed) in the prefix cache.
  void commit(BlockTable& table, const int32_t* tokens, int32_t n_computed);
  void release(BlockTable& table);  // drops every reference; clears the table
  // Drops the blocks past those holding slots [0, n_slots) (speculative
  // positions that were rejected). Hashed blocks hold committed tokens only,
  // so they are never past n_slots of a sequence's computed tokens.
  void truncate(BlockTable& table, int32_t n_slots);

  int32_t block_size() const { return block_size_; }
  int32_t total_blocks() const { return int32_t(ref_.size()); }
  int32_t free_blocks() const { return free_count_; }
  int32_t used_blocks() const { return total_blocks() - free_count_; }
  int32_t cached_blocks() const;  // free blocks still holding a findable prefix
  // Forgets every free block's prefix (blocks in use keep theirs); returns how
  // many. `on_free` sees every free block (whose memory may then go back).
  int32_t drop_cached(const std::function<void(int32_t block)>& on_free = {});

 private:
  uint64_t block_hash(uint64_t parent, const int32_t* tokens) const;
  bool holds(int32_t block, uint64_t parent, const int32_t* tokens) const;
  int32_t allocate();
  void forget(int32_t block);  // removes it from the prefix cache
  void push_free(int32_t block, bool front);
  void unlink_free(int32_t block);

  int32_t block_size_;
  bool prefix_cache_;
  std::function<void(int32_t, int32_t)> copy_;
  std::function<void(int32_t)> on_allocate_;
  std::vector<int32_t> ref_;
  std::vector<uint64_t> hash_, parent_;  // hash_ 0: not in the prefix cache
  std::vector<int32_t> tokens_;          // [block][block_size]: what a cached block holds
  // Free list, doubly linked: uncached blocks at the front (reused first),
  // cached ones behind them from least to most recently freed.
  std::vector<int32_t> prev_, next_;
  int32_t head_ = -1, tail_ = -1, free_count_ = 0, cached_free_ = 0;
  BlockHashMap index_;
  std::vector<int32_t> match_;  // blocks of the last match_prefix()
  std::vector<uint64_t> match_hashes_;
  uint64_t missed_ = 0;
};

}  // namespace parley
