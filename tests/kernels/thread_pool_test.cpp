#include "kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace parley {
namespace {

TEST(ThreadPool, RunCallsEveryThreadOnce) {
  for (const int n : {1, 2, 3, 5}) {
    ThreadPool pool(n);
    EXPECT_EQ(pool.size(), n);
    for (int rep = 0; rep < 20; ++rep) {  // repeated dispatches reuse the same threads
      std::vector<std::atomic<int>> calls(static_cast<size_t>(n));
      pool.run([&](int t, int nt) {
        ASSERT_EQ(nt, n);
        calls[size_t(t)].fetch_add(1);
      });
      for (auto& c : calls) EXPECT_EQ(c.load(), 1);
    }
  }
}

TEST(ThreadPool, ParallelForCoversRangeExactlyOnce) {
  for (const bool dynamic : {false, true})
    for (const int threads : {1, 2, 3, 5}) {
      ThreadPool pool(threads);
      for (const int64_t n : {0, 1, 5, 64, 1001}) {
        for (const int64_t grain : {1, 32}) {
          std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
          const auto fn = [&](int64_t b, int64_t e) {
            ASSERT_LT(b, e);
            if (e < n) {
              EXPECT_EQ(e % grain, 0) << "chunk ends off the grain";
            }
            for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1);
          };
          if (dynamic) pool.parallel_for_dynamic(n, fn, grain);
          else pool.parallel_for(n, fn, grain);
          for (int64_t i = 0; i < n; ++i)
            ASSERT_EQ(hits[size_t(i)].load(), 1)
                << "n " << n << " grain " << grain << " threads " << threads << " dynamic " << dynamic;
        }
      }
    }
}

// A thread held up in its first chunk (as when the OS runs another process on
// its core) leaves the remaining chunks to the others.
TEST(ThreadPool, DynamicChunksGoToTheThreadsThatAreFree) {
  ThreadPool pool(2);
  std::mutex m;
  std::map<std::thread::id, int> chunks_by_thread;
  std::atomic<bool> held{false};
  std::atomic<int> others_done{0};
  pool.parallel_for_dynamic(64, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(m);
      ++chunks_by_thread[std::this_thread::get_id()];
    }
    if (held.exchange(true)) {
      ++others_done;
      return;
    }
    // The first chunk waits until the other 7 are done (or 10 s pass, when they cannot be).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (others_done < 7 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  int total = 0, most = 0;
  for (const auto& [id, n] : chunks_by_thread) {
    total += n;
    most = std::max(most, n);
  }
  EXPECT_EQ(total, 8);  // 4 chunks per thread
  EXPECT_EQ(most, 7) << "the held thread should have run only its first chunk";
}

TEST(ChunkRun, TakesFromEitherEndUntilEmpty) {
  ChunkRun run;
  run.reset(2, 6);
  EXPECT_EQ(run.take_front(), 2);
  EXPECT_EQ(run.take_back(), 5);
  EXPECT_EQ(run.take_front(), 3);
  EXPECT_EQ(run.take_back(), 4);
  EXPECT_EQ(run.take_front(), -1);
  EXPECT_EQ(run.take_back(), -1);
}

// An owner taking from the front and thieves from the back never take a chunk twice.
TEST(ChunkRun, ConcurrentTakersGetEveryChunkOnce) {
  constexpr int kChunks = 100000;
  ChunkRun run;
  run.reset(0, kChunks);
  std::vector<std::atomic<int>> taken(kChunks);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int64_t c; (c = t == 0 ? run.take_front() : run.take_back()) >= 0;) taken[size_t(c)].fetch_add(1);
    });
  for (auto& th : threads) th.join();
  for (int c = 0; c < kChunks; ++c) ASSERT_EQ(taken[size_t(c)].load(), 1) << "chunk " << c;
}

TEST(ThreadPool, ClampsToOneThread) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.size(), 1);
  int calls = 0;
  pool.run([&](int t, int nt) { calls += (t == 0 && nt == 1); });
  EXPECT_EQ(calls, 1);
}

TEST(ThreadPool, PhysicalCoresIsPositive) { EXPECT_GE(physical_cores(), 1); }

}  // namespace
}  // namespace parley
