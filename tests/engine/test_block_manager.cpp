// The KV pool's accounting: reference counts, the free list's reuse order,
// prefix caching with hash verification, copy-on-write; and its index.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "engine/block_hash_map.h"
#include "engine/block_manager.h"

namespace parley {
namespace {

constexpr int32_t kBs = 4;

std::vector<int32_t> tokens(int32_t n, int32_t salt) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) t[size_t(i)] = i * 3 + salt;
  return t;
}

TEST(BlockHashMap, AgreesWithUnorderedMap) {
  BlockHashMap map(64);
  std::unordered_map<uint64_t, int32_t> want;
  std::mt19937_64 rng(1);
  for (int step = 0; step < 20000; ++step) {
    const uint64_t key = rng() % 97;  // few keys: long probe runs, many erasures
    if (rng() % 3 == 0) {
      map.erase(key);
      want.erase(key);
    } else if (!want.count(key) && want.size() < 64) {
      map.insert(key, int32_t(step));
      want[key] = int32_t(step);
    }
    ASSERT_EQ(map.size(), int64_t(want.size()));
  }
  for (uint64_t key = 0; key < 97; ++key) EXPECT_EQ(map.find(key), want.count(key) ? want[key] : -1) << key;
}

TEST(BlockManager, ReservesAllOrNothingAndReleases) {
  BlockManager m(5, kBs, false);
  BlockTable a, b;
  EXPECT_TRUE(m.reserve(a, 0, 9));  // 3 blocks
  EXPECT_EQ(a.blocks.size(), 3u);
  EXPECT_EQ(m.free_blocks(), 2);
  EXPECT_FALSE(m.reserve(b, 0, 12));  // needs 3
  EXPECT_TRUE(b.blocks.empty());
  EXPECT_EQ(m.free_blocks(), 2);
  EXPECT_TRUE(m.reserve(a, 9, 12));  // still within block 2
  EXPECT_EQ(a.blocks.size(), 3u);
  m.release(a);
  EXPECT_TRUE(a.blocks.empty());
  EXPECT_EQ(m.free_blocks(), 5);
  EXPECT_EQ(m.used_blocks(), 0);
}

// Speculative positions that were rejected: the blocks past the kept slots
// go back, the hashed (committed) ones stay.
TEST(BlockManager, TruncateKeepsTheBlocksOfTheKeptSlots) {
  BlockManager m(6, kBs, true);
  BlockTable a;
  const auto t = tokens(20, 1);
  ASSERT_TRUE(m.reserve(a, 0, 5));
  m.commit(a, t.data(), 5);  // block 0 hashed
  ASSERT_TRUE(m.reserve(a, 5, 14));  // 4 blocks: drafts up to slot 13
  EXPECT_EQ(m.free_blocks(), 2);
  m.truncate(a, 7);  // slots 0-6 kept: 2 blocks
  EXPECT_EQ(a.blocks.size(), 2u);
  EXPECT_EQ(a.hashes.size(), 1u);
  EXPECT_EQ(m.free_blocks(), 4);
  m.truncate(a, 8);  // nothing past block 1 left
  EXPECT_EQ(a.blocks.size(), 2u);
  m.release(a);
  EXPECT_EQ(m.free_blocks(), 6);
  EXPECT_EQ(m.cached_blocks(), 1);
}

TEST(BlockManager, PrefixHitsAreVerifiedAndShared) {
  BlockManager m(8, kBs, true);
  const auto t = tokens(10, 0);
  BlockTable a;
  ASSERT_TRUE(m.reserve(a, 0, 10));
  m.commit(a, t.data(), 10);  // blocks 0 and 1 are full
  int32_t free_hits = -1;
  EXPECT_EQ(m.match_prefix(t.data(), 10, &free_hits), 2);
  EXPECT_EQ(free_hits, 0);  // still held by a
  BlockTable b;
  m.take_prefix(b);
  EXPECT_EQ(b.blocks, std::vector<int32_t>(a.blocks.begin(), a.blocks.begin() + 2));
  // A different second block stops the match after the first.
  auto other = t;
  other[5] = 999;
  EXPECT_EQ(m.match_prefix(other.data(), 10, nullptr), 1);
  // The same second block after a different first block is another block.
  auto moved = t;
  moved[0] = 999;
  EXPECT_EQ(m.match_prefix(moved.data(), 10, nullptr), 0);
  m.release(a);
  m.release(b);
  EXPECT_EQ(m.cached_blocks(), 2);
  EXPECT_EQ(m.match_prefix(t.data(), 10, &free_hits), 2);
  EXPECT_EQ(free_hits, 2);
}

TEST(BlockManager, UncachedBlocksAreReusedFirstThenLeastRecentlyFreed) {
  BlockManager m(4, kBs, true);
  const auto t1 = tokens(8, 1), t2 = tokens(4, 2);
  BlockTable a, b;
  ASSERT_TRUE(m.reserve(a, 0, 8));
  m.commit(a, t1.data(), 8);
  ASSERT_TRUE(m.reserve(b, 0, 4));
  m.commit(b, t2.data(), 4);
  m.release(a);  // a's two blocks: cached, freed first (older)
  m.release(b);
  EXPECT_EQ(m.cached_blocks(), 3);
  BlockTable c;
  ASSERT_TRUE(m.reserve(c, 0, 4));  // the never-used block goes first
  EXPECT_EQ(m.cached_blocks(), 3);
  ASSERT_TRUE(m.reserve(c, 4, 8));  // then a's last block (LRU, and a's tail before its head)
  EXPECT_EQ(m.cached_blocks(), 2);
  EXPECT_EQ(m.match_prefix(t1.data(), 8, nullptr), 1);  // a's first block survives
  EXPECT_EQ(m.match_prefix(t2.data(), 4, nullptr), 1);
}

// Every block that leaves the free list is announced before it is written
// (the engine commits its pages then): new blocks and copy-on-write targets,
// not the shared blocks of a prefix hit.
TEST(BlockManager, AnnouncesEveryAllocatedBlock) {
  BlockManager m(6, kBs, true);
  std::vector<int32_t> announced, copied_to;
  m.set_on_allocate([&](int32_t b) { announced.push_back(b); });
  m.set_copy([&](int32_t dst, int32_t) { copied_to.push_back(dst); });
  const auto t = tokens(8, 5);
  BlockTable a, b;
  ASSERT_TRUE(m.reserve(a, 0, 8));
  EXPECT_EQ(announced, a.blocks);
  m.commit(a, t.data(), 8);
  ASSERT_EQ(m.match_prefix(t.data(), 8, nullptr), 2);
  m.take_prefix(b);
  EXPECT_EQ(announced.size(), 2u);  // shared, not allocated
  ASSERT_TRUE(m.reserve(b, 7, 8));  // copy-on-write of the second block
  ASSERT_EQ(copied_to.size(), 1u);
  EXPECT_EQ(announced.size(), 3u);
  EXPECT_EQ(announced.back(), copied_to[0]);
}

TEST(BlockManager, CopyOnWriteOfASharedBlock) {
  BlockManager m(6, kBs, true);
  std::vector<std::pair<int32_t, int32_t>> copies;
  m.set_copy([&](int32_t dst, int32_t src) { copies.push_back({dst, src}); });
  const auto t = tokens(8, 5);
  BlockTable a, b;
  ASSERT_TRUE(m.reserve(a, 0, 8));
  m.commit(a, t.data(), 8);
  ASSERT_EQ(m.match_prefix(t.data(), 8, nullptr), 2);
  m.take_prefix(b);
  EXPECT_EQ(m.blocks_needed(b, 7, 8), 1);
  ASSERT_TRUE(m.reserve(b, 7, 8));  // writing slot 7 of the shared second block
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].second, a.blocks[1]);
  EXPECT_EQ(b.blocks[1], copies[0].first);
  EXPECT_EQ(b.blocks[0], a.blocks[0]);  // the first stays shared
  EXPECT_EQ(b.hashes.size(), 1u);       // the copy is not cached until committed
  m.release(a);
  m.release(b);
  EXPECT_EQ(m.free_blocks(), 6);
}

}  // namespace
}  // namespace parley
