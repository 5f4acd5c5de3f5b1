#pragma once
// A persistent pool of worker threads for data-parallel kernels.
// Threads are created once and run with denormals flushed to zero (as does
// the thread that creates the pool); run() wakes them (spinning briefly first, so the
// dozens of dispatches per token cost microseconds, then sleeping on a futex).
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace parley {

// The chunks [front, back) not yet taken, taken one at a time from either end
// by any thread; on its own cache line.
class alignas(64) ChunkRun {
 public:
  void reset(int64_t front, int64_t back) { bits_.store(pack(front, back), std::memory_order_relaxed); }
  int64_t take_front() { return take(true); }
  int64_t take_back() { return take(false); }  // -1 when none is left

 private:
  static uint64_t pack(int64_t front, int64_t back) { return uint64_t(front) << 32 | uint64_t(back); }
  int64_t take(bool front) {
    uint64_t v = bits_.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t f = int64_t(v >> 32), b = int64_t(v & 0xffffffffu);
      if (f >= b) return -1;
      if (bits_.compare_exchange_weak(v, front ? pack(f + 1, b) : pack(f, b - 1), std::memory_order_relaxed))
        return front ? f : b - 1;
    }
  }
  std::atomic<uint64_t> bits_{0};
};

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);  // total threads, the caller included
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn(thread_index, n_threads) on every thread (the caller is index 0)
  // and returns when all have finished. Not reentrant.
  template <class F>
  void run(F&& fn) {
    dispatch(&invoke<std::remove_reference_t<F>>, &fn);
  }

  // Splits [0, n) into one contiguous chunk per thread; fn(begin, end).
  // `grain` rounds chunk boundaries (e.g. to a SIMD or block width).
  template <class F>
  void parallel_for(int64_t n, F&& fn, int64_t grain = 1) {
    run([&](int t, int nt) {
      const int64_t units = (n + grain - 1) / grain;
      const int64_t b = units * t / nt * grain;
      const int64_t e = std::min(n, units * (t + 1) / nt * grain);
      if (b < e) fn(b, e);
    });
  }

  // Like parallel_for, but in kChunksPerThread chunks per thread: each thread
  // runs its own contiguous chunks front to back, then takes the chunks others
  // have not reached from the back of their runs. A thread the OS preempts
  // (other processes on the cores) holds up one small chunk, not a whole
  // share, while each thread still reads one contiguous stream: chunks handed
  // out in turn from one counter interleave the threads' reads, which cost a
  // quarter of the memory bandwidth of a matrix-vector product on the Zen 3
  // guest (docs/performance.md). For kernels whose threads only read shared data.
  template <class F>
  void parallel_for_dynamic(int64_t n, F&& fn, int64_t grain = 1) {
    constexpr int64_t kChunksPerThread = 4;
    const int64_t units = (n + grain - 1) / grain;
    const int64_t chunks = std::min(units, int64_t(n_threads_) * kChunksPerThread);
    for (int t = 0; t < n_threads_; ++t) runs_[size_t(t)].reset(chunks * t / n_threads_, chunks * (t + 1) / n_threads_);
    run([&](int t, int nt) {
      const auto chunk = [&](int64_t c) {
        const int64_t b = units * c / chunks * grain, e = std::min(n, units * (c + 1) / chunks * grain);
        if (b < e) fn(b, e);
      };
      for (int64_t c; (c = runs_[size_t(t)].take_front()) >= 0;) chunk(c);
      for (int i = 1; i < nt; ++i)
        for (int64_t c; (c = runs_[size_t((t + i) % nt)].take_back()) >= 0;) chunk(c);
    });
  }

 private:
  using Thunk = void (*)(void*, int, int);
  template <class F>
  static void invoke(void* f, int t, int nt) { (*static_cast<F*>(f))(t, nt); }
  void dispatch(Thunk thunk, void* ctx);
  void worker(int index);

  int n_threads_;
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  Thunk thunk_ = nullptr;
  void* ctx_ = nullptr;
  std::vector<ChunkRun> runs_;  // parallel_for_dynamic's, one per thread
};

// Physical cores available to this process (hyper-threads counted once).
int physical_cores();

}  // namespace parley
