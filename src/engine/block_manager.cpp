#include "engine/block_manager.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace parley {

BlockManager::BlockManager(int32_t n_blocks, int32_t block_size, bool prefix_cache)
    : block_size_(block_size),
      prefix_cache_(prefix_cache),
      ref_(size_t(n_blocks), 0),
      hash_(size_t(n_blocks), 0),
      parent_(size_t(n_blocks), 0),
      tokens_(prefix_cache ? size_t(n_blocks) * size_t(block_size) : 0),
      prev_(size_t(n_blocks), -1),
      next_(size_t(n_blocks), -1),
      index_(prefix_cache ? n_blocks : 1) {
  if (n_blocks < 1 || block_size < 1) throw Error("BlockManager: need at least one block of one slot");
  for (int32_t b = 0; b < n_blocks; ++b) push_free(b, false);
  match_.reserve(size_t(n_blocks));
  match_hashes_.reserve(size_t(n_blocks));
}

// FNV-1a over the parent hash and the token ids, then a final avalanche
// (splitmix64) so that neighbouring inputs spread over the table.
uint64_t BlockManager::block_hash(uint64_t parent, const int32_t* tokens) const {
  uint64_t h = 0xcbf29ce484222325ull ^ parent;
  for (int32_t i = 0; i < block_size_; ++i) h = (h ^ uint32_t(tokens[i])) * 0x100000001b3ull;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

// Guards against hash collisions: a hit must hold exactly these tokens
// after exactly this parent.
bool BlockManager::holds(int32_t block, uint64_t parent, const int32_t* tokens) const {
  return parent_[size_t(block)] == parent &&
         std::equal(tokens, tokens + block_size_, tokens_.begin() + ptrdiff_t(block) * block_size_);
}

int32_t BlockManager::match_prefix(const int32_t* tokens, int32_t n, int32_t* free_hits, uint64_t root) {
  match_.clear();
  match_hashes_.clear();
  missed_ = 0;
  int32_t free = 0;
  uint64_t parent = root;
  for (int32_t b = 0; prefix_cache_ && (b + 1) * block_size_ <= n; ++b) {
    const int32_t* t = tokens + ptrdiff_t(b) * block_size_;
    const uint64_t h = block_hash(parent, t);
    const int32_t block = index_.find(h);
    if (block < 0 || !holds(block, parent, t)) {
      missed_ = h;
      break;
    }
    match_.push_back(block);
    match_hashes_.push_back(h);
    free += ref_[size_t(block)] == 0;
    parent = h;
  }
  if (free_hits) *free_hits = free;
  return int32_t(match_.size());
}

uint64_t BlockManager::next_block_hash(const BlockTable& table, const int32_t* tokens, int32_t n) const {
  const size_t b = table.hashes.size();
  if (!prefix_cache_ || int32_t(b + 1) * block_size_ > n) return 0;
  return block_hash(b ? table.hashes[b - 1] : table.root, tokens + ptrdiff_t(b) * block_size_);
}

void BlockManager::take_prefix(BlockTable& table) {
  for (size_t i = 0; i < match_.size(); ++i) {
    const int32_t b = match_[i];
    if (ref_[size_t(b)]++ == 0) unlink_free(b);
    table.blocks.push_back(b);
    table.hashes.push_back(match_hashes_[i]);
  }
  match_.clear();
}

int32_t BlockManager::blocks_needed(const BlockTable& table, int32_t first, int32_t end) const {
  const int32_t have = int32_t(table.blocks.size());
  const int32_t want = (end + block_size_ - 1) / block_size_;
  int32_t copies = 0;
  for (int32_t b = first / block_size_; b < std::min(have, want); ++b) copies += ref_[size_t(table.blocks[size_t(b)])] > 1;
  return std::max(0, want - have) + copies;
}

bool BlockManager::reserve(BlockTable& table, int32_t first, int32_t end) {
  if (end <= first) return true;
  if (blocks_needed(table, first, end) > free_count_) return false;
  const int32_t have = int32_t(table.blocks.size());
  for (int32_t b = first / block_size_; b < have && b * block_size_ < end; ++b) {
    int32_t& block = table.blocks[size_t(b)];
    if (ref_[size_t(block)] > 1) {  // shared: write into a private copy
      const int32_t copy = allocate();
      if (copy_) copy_(copy, block);
      --ref_[size_t(block)];
      block = copy;
    } else {
      forget(block);  // its contents are about to change
    }
    table.hashes.resize(std::min(table.hashes.size(), size_t(b)));
  }
  while (int32_t(table.blocks.size()) * block_size_ < end) table.blocks.push_back(allocate());
  return true;
}

void BlockManager::commit(BlockTable& table, const int32_t* tokens, int32_t n_computed) {
  if (!prefix_cache_) return;
  for (size_t b = table.hashes.size(); int32_t(b + 1) * block_size_ <= n_computed; ++b) {
    const uint64_t parent = b ? table.hashes[b - 1] : table.root;
    const int32_t* t = tokens + ptrdiff_t(b) * block_size_;
    const uint64_t h = block_hash(parent, t);
    table.hashes.push_back(h);
    const int32_t block = table.blocks[b];
    if (index_.find(h) >= 0) continue;  // an identical block is already cached
    index_.insert(h, block);
    hash_[size_t(block)] = h;
    parent_[size_t(block)] = parent;
    std::copy_n(t, block_size_, tokens_.begin() + ptrdiff_t(block) * block_size_);
  }
}

// The last blocks of a sequence go to the free list first, so that its
// prefix, the part most likely shared, is the last to be reused.
void BlockManager::release(BlockTable& table) {
  for (auto it = table.blocks.rbegin(); it != table.blocks.rend(); ++it)
    if (--ref_[size_t(*it)] == 0) push_free(*it, hash_[size_t(*it)] == 0);
  table.blocks.clear();
  table.hashes.clear();
}

void BlockManager::truncate(BlockTable& table, int32_t n_slots) {
  const size_t keep = size_t((n_slots + block_size_ - 1) / block_size_);
  while (table.blocks.size() > keep) {
    const int32_t b = table.blocks.back();
    if (--ref_[size_t(b)] == 0) push_free(b, hash_[size_t(b)] == 0);
    table.blocks.pop_back();
  }
  if (table.hashes.size() > keep) table.hashes.resize(keep);
}

int32_t BlockManager::allocate() {
  const int32_t b = head_;
  if (b < 0) throw Error("BlockManager: out of blocks");  // reserve() checks first
  unlink_free(b);
  forget(b);
  ref_[size_t(b)] = 1;
  if (on_allocate_) on_allocate_(b);
  return b;
}

void BlockManager::forget(int32_t block) {
  const uint64_t h = hash_[size_t(block)];
  if (h == 0) return;
  if (index_.find(h) == block) index_.erase(h);
  hash_[size_t(block)] = 0;
}

void BlockManager::push_free(int32_t b, bool front) {
  const size_t i = size_t(b);
  if (front) {
    prev_[i] = -1;
    next_[i] = head_;
    if (head_ >= 0) prev_[size_t(head_)] = b;
    else tail_ = b;
    head_ = b;
  } else {
    prev_[i] = tail_;
    next_[i] = -1;
    if (tail_ >= 0) next_[size_t(tail_)] = b;
    else head_ = b;
    tail_ = b;
  }
  ++free_count_;
  cached_free_ += hash_[i] != 0;
}

void BlockManager::unlink_free(int32_t b) {
  const size_t i = size_t(b);
  if (prev_[i] >= 0) next_[size_t(prev_[i])] = next_[i];
  else head_ = next_[i];
  if (next_[i] >= 0) prev_[size_t(next_[i])] = prev_[i];
  else tail_ = prev_[i];
  prev_[i] = next_[i] = -1;
  --free_count_;
  cached_free_ -= hash_[i] != 0;
}

int32_t BlockManager::cached_blocks() const { return cached_free_; }

// The blocks stay where they are in the free list; uncached, they are simply
// reused like the others.
int32_t BlockManager::drop_cached(const std::function<void(int32_t)>& on_free) {
  const int32_t dropped = cached_free_;
  for (int32_t b = head_; b >= 0; b = next_[size_t(b)]) {
    forget(b);
    if (on_free) on_free(b);
  }
  cached_free_ = 0;
  return dropped;
}

}  // namespace parley
