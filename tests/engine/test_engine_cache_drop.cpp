// LlmEngine::drop_cached_blocks (the memory watchdog's first resort): the
// prefix cache of finished requests is forgotten, while a running request
// keeps its blocks (and they stay findable).
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "engine/block_manager.h"
#include "engine_test_util.h"

namespace parley {
namespace {

using namespace std::chrono_literals;
using testing::Collector;
using testing::prompt;

// Polls the engine's stats until `done` holds (5 s at most).
template <typename Pred>
EngineStats wait_stats(const LlmEngine& engine, Pred done) {
  EngineStats s = engine.stats();
  for (int i = 0; i < 500 && !done(s); ++i) {
    std::this_thread::sleep_for(10ms);
    s = engine.stats();
  }
  return s;
}

TEST(BlockManagerDrop, ForgetsFreeCachedBlocksOnly) {
  BlockManager m(8, 4, true);
  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6, 7, 8}, b = {9, 9, 9, 9};
  BlockTable ta, tb;
  ASSERT_TRUE(m.reserve(ta, 0, 8));
  m.commit(ta, a.data(), 8);
  ASSERT_TRUE(m.reserve(tb, 0, 4));
  m.commit(tb, b.data(), 4);
  m.release(ta);
  EXPECT_EQ(m.cached_blocks(), 2);
  EXPECT_EQ(m.drop_cached(), 2);
  EXPECT_EQ(m.cached_blocks(), 0);
  EXPECT_EQ(m.match_prefix(a.data(), 8, nullptr), 0);  // forgotten
  EXPECT_EQ(m.match_prefix(b.data(), 4, nullptr), 1);  // held by tb: kept
  EXPECT_EQ(m.free_blocks(), 7);
}

TEST(EngineCacheDrop, FinishedPrefixesGoRunningRequestKeepsItsBlocks) {
  const auto model = Model::load(testing::kBundled);
  EngineConfig c;
  c.threads = 1;
  LlmEngine engine(*model, c);
  Collector col;
  const std::vector<int32_t> finished_prompt = prompt(64, 1), running_prompt = prompt(40, 2);
  engine.submit(testing::greedy(finished_prompt, 2), col.sink());
  col.wait(1);
  ASSERT_GE(engine.stats().kv_blocks_cached, 4u);
  EXPECT_GE(engine.stats().kv_blocks_committed, 4u);

  // A long request, slowed down so that it is still running after the drop.
  std::promise<void> started;
  bool signalled = false;
  Request r = testing::greedy(running_prompt, 300);
  r.ignore_eos = true;
  const RequestId running = engine.submit(r, [&](const Event& e) {
    if (e.token >= 0 && !signalled) {
      signalled = true;
      started.set_value();
    }
    std::this_thread::sleep_for(1ms);
    col.sink()(e);
  });
  started.get_future().wait();
  engine.drop_cached_blocks();
  const EngineStats dropped = wait_stats(engine, [](const EngineStats& s) { return s.kv_blocks_cached == 0; });
  EXPECT_EQ(dropped.kv_blocks_cached, 0u);
  EXPECT_GE(dropped.kv_blocks_used, 3u) << "the running request's blocks";
  // The free blocks' memory went back: only the running request's stays resident.
  EXPECT_EQ(dropped.kv_blocks_committed, dropped.kv_blocks_used);
  EXPECT_EQ(dropped.running, 1);

  // The finished prompt is no longer found; the running one still is.
  const uint64_t hits = dropped.prefix_cache_hit_tokens;
  engine.submit(testing::greedy(finished_prompt, 1), col.sink());
  col.wait(2);
  EXPECT_EQ(engine.stats().prefix_cache_hit_tokens, hits);
  engine.submit(testing::greedy(running_prompt, 1), col.sink());
  col.wait(3);
  EXPECT_EQ(engine.stats().prefix_cache_hit_tokens, hits + 32);  // its two full blocks of 16

  col.wait(4);
  const testing::Outcome out = col.get(running);
  EXPECT_EQ(out.final.finish, FinishReason::Length);
  EXPECT_EQ(out.tokens, testing::run_alone(*model, c, {r})[0].tokens) << "its K/V were not disturbed";
}

}  // namespace
}  // namespace parley
