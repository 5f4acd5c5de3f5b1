// The response cache: local LRU within a byte budget and TTL, and Redis.
#include <gtest/gtest.h>

#include <thread>

#include "redis_test.h"
#include "state/response_cache.h"

namespace parley::state {
namespace {

using namespace std::chrono_literals;

TEST(LocalResponseCache, EvictsLeastRecentlyUsedByBytes) {
  auto cache = make_local_response_cache(100);
  const std::string value(30, 'v');  // 31 bytes with a 1-byte key
  cache->put("a", value, 60s);
  cache->put("b", value, 60s);
  cache->put("c", value, 60s);
  EXPECT_EQ(cache->stats().bytes, 93u);
  EXPECT_TRUE(cache->get("a"));  // now b is the least recently used
  cache->put("d", value, 60s);
  EXPECT_FALSE(cache->get("b"));
  EXPECT_TRUE(cache->get("a"));
  EXPECT_TRUE(cache->get("c"));
  EXPECT_TRUE(cache->get("d"));
  EXPECT_EQ(cache->stats().evictions, 1u);
  EXPECT_EQ(cache->stats().entries, 3u);
  EXPECT_EQ(cache->stats().bytes, 93u);
  EXPECT_EQ(cache->stats().hits, 4u);
  EXPECT_EQ(cache->stats().misses, 1u);
  EXPECT_EQ(cache->stats().insertions, 4u);

  cache->put("a", "short", 60s);  // a replacement counts its new size
  EXPECT_EQ(cache->stats().bytes, 62u + 6u);
  EXPECT_EQ(cache->get("a"), "short");

  cache->put("huge", std::string(200, 'x'), 60s);  // larger than the budget: not kept, nothing evicted
  EXPECT_FALSE(cache->get("huge"));
  EXPECT_EQ(cache->stats().entries, 3u);

  cache->put("e", std::string(95, 'e'), 60s);  // 96 bytes: everything else must go
  EXPECT_EQ(cache->stats().entries, 1u);
  EXPECT_EQ(cache->stats().bytes, 96u);

  cache->clear();
  EXPECT_EQ(cache->stats().entries, 0u);
  EXPECT_EQ(cache->stats().bytes, 0u);
  EXPECT_FALSE(cache->get("e"));
}

TEST(LocalResponseCache, EntriesExpire) {
  auto cache = make_local_response_cache(1 << 20);
  cache->put("short", "x", 1s);
  cache->put("long", "y", 60s);
  EXPECT_EQ(cache->get("short"), "x");
  std::this_thread::sleep_for(1100ms);
  EXPECT_FALSE(cache->get("short"));
  EXPECT_EQ(cache->get("long"), "y");
  EXPECT_EQ(cache->stats().entries, 1u);
}

class RedisResponseCacheTest : public test::RedisTest {};

TEST_F(RedisResponseCacheTest, SetGetExpire) {
  auto p = pool();
  auto cache = make_redis_response_cache(p);
  const std::string bytes("data: {\"x\":1}\n\n\0\xff", 18);
  cache->put("key1", bytes, 1s);
  cache->put("key2", "stays", 60s);
  EXPECT_EQ(cache->get("key1"), bytes);  // byte-identical
  EXPECT_EQ(p->command({"GET", "parley:cache:key2"}).str, "stays");
  EXPECT_GT(p->command({"TTL", "parley:cache:key2"}).integer, 50);
  std::this_thread::sleep_for(1100ms);
  EXPECT_FALSE(cache->get("key1"));
  EXPECT_EQ(cache->get("key2"), "stays");
  EXPECT_FALSE(cache->get("never"));
  EXPECT_EQ(cache->stats().hits, 2u);
  EXPECT_EQ(cache->stats().misses, 2u);
  EXPECT_EQ(cache->stats().insertions, 2u);
  // A second replica sees the same entries.
  EXPECT_EQ(make_redis_response_cache(pool())->get("key2"), "stays");
}

}  // namespace
}  // namespace parley::state
