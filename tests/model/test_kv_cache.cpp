// KvCache's memory: blocks are committed as first used, and a released block's
// pages go back to the OS (what the memory watchdog relies on).
#include "model/kv_cache.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

namespace parley {
namespace {

// Resident pages among the whole pages of [begin, end).
size_t pages_in_core(const uint8_t* begin, const uint8_t* end) {
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (uintptr_t(begin) + page - 1) & ~(page - 1), last = uintptr_t(end) & ~(page - 1);
  if (last <= first) return 0;
  std::vector<unsigned char> flags((last - first) / page);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(first), last - first, flags.data()), 0);
  size_t n = 0;
  for (unsigned char f : flags) n += f & 1;
  return n;
}

TEST(KvCache, ReleasedBlocksGiveTheirPagesBack) {
  ModelConfig m;
  m.n_layers = 4;
  m.n_kv_heads = 4;
  m.head_dim = 64;
  const int32_t block_size = 16;  // 4 * 2 * 4 * 64 * 16 * 4 bytes = 128 KiB a block in F32
  KvCache cache(m, DType::F32, block_size, 8);
  EXPECT_EQ(cache.committed_blocks(), 0);
  uint8_t* row = cache.k_row(3, 0, 0, 0);
  cache.commit_block(3);
  cache.commit_block(3);
  EXPECT_EQ(cache.committed_blocks(), 1);
  const uint64_t bytes = KvCache::block_bytes(m, DType::F32, block_size);
  for (uint64_t i = 0; i < bytes; i += 64) row[i] = 7;  // row 0 of layer 0 is the block's start
  EXPECT_GT(pages_in_core(row, row + bytes), 16u);

  cache.release_block(3);
  EXPECT_FALSE(cache.committed(3));
  EXPECT_EQ(cache.committed_blocks(), 0);
  EXPECT_EQ(pages_in_core(row, row + bytes), 0u);
  EXPECT_EQ(row[bytes / 2], 0);  // its contents are gone
  cache.release_block(3);        // already released: nothing happens
  EXPECT_EQ(cache.committed_blocks(), 0);
  cache.commit_block(3);
  EXPECT_TRUE(cache.committed(3));
}

}  // namespace
}  // namespace parley
