#include "kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
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
  for (const int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    for (const int64_t n : {0, 1, 5, 64, 1001}) {
      for (const int64_t grain : {1, 32}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        pool.parallel_for(
            n,
            [&](int64_t b, int64_t e) {
              ASSERT_LT(b, e);
              if (e < n) {
                EXPECT_EQ(e % grain, 0) << "chunk ends off the grain";
              }
              for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1);
            },
            grain);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(hits[size_t(i)].load(), 1) << "n " << n << " grain " << grain << " threads " << threads;
      }
    }
  }
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
