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

  // Like parallel_for, but in kChunksPerThread chunks per thread taken from a
  // shared counter: a thread the OS preempts (other processes on the cores)
  // holds up one small chunk, not a whole share. For kernels whose threads
  // only read shared data.
  template <class F>
  void parallel_for_dynamic(int64_t n, F&& fn, int64_t grain = 1) {
    constexpr int64_t kChunksPerThread = 4;
    const int64_t units = (n + grain - 1) / grain;
    const int64_t chunks = std::min(units, int64_t(n_threads_) * kChunksPerThread);
    std::atomic<int64_t> next{0};
    run([&](int, int) {
      for (int64_t c = next.fetch_add(1, std::memory_order_relaxed); c < chunks;
           c = next.fetch_add(1, std::memory_order_relaxed)) {
        const int64_t b = units * c / chunks * grain, e = std::min(n, units * (c + 1) / chunks * grain);
        if (b < e) fn(b, e);
      }
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
};

// Physical cores available to this process (hyper-threads counted once).
int physical_cores();

}  // namespace parley
