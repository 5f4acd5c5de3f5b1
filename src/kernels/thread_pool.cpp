#include "kernels/thread_pool.h"

#include <sched.h>

#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace parley {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// About 60 us of pause instructions: enough to bridge the serial work between
// a forward pass's dispatches; longer spins cost a busy machine dearly (a
// spinning worker takes the core its own caller is waiting for).
constexpr int kSpinIterations = 1 << 11;
constexpr int kCallerSpinIterations = 1 << 10;

// Denormal floats (tiny attention weights, say) make x86 multiply ~100x slower
// through microcode assists; kernels treat them as zero instead (FTZ + DAZ).
void flush_denormals() {
#if defined(__x86_64__)
  __builtin_ia32_ldmxcsr(__builtin_ia32_stmxcsr() | 0x8040);
#endif
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads), runs_(size_t(n_threads_)) {
  flush_denormals();  // the calling thread runs part of every job
  threads_.reserve(size_t(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::dispatch(Thunk thunk, void* ctx) {
  if (n_threads_ == 1) {
    thunk(ctx, 0, 1);
    return;
  }
  thunk_ = thunk;
  ctx_ = ctx;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  thunk(ctx, 0, n_threads_);
  // Spin briefly, then yield: on a busy machine a worker may be waiting for
  // this very CPU, and spinning through a whole time slice costs milliseconds.
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < kCallerSpinIterations) cpu_relax();
    else std::this_thread::yield();
  }
}

void ThreadPool::worker(int index) {
  flush_denormals();
  uint64_t seen = 0;
  for (;;) {
    uint64_t g;
    for (int spin = 0; (g = generation_.load(std::memory_order_acquire)) == seen; ++spin) {
      if (spin < kSpinIterations) cpu_relax();
      else generation_.wait(seen, std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load(std::memory_order_acquire)) return;
    thunk_(ctx_, index, n_threads_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

int physical_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    const unsigned n = std::thread::hardware_concurrency();
    return n ? int(n) : 1;
  }
  // Count distinct (package, core) pairs among the CPUs we may run on.
  std::set<std::pair<std::string, std::string>> cores;
  int cpus = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    ++cpus;
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::ifstream core(base + "core_id"), pkg(base + "physical_package_id");
    std::string c, p;
    if (!(core >> c) || !(pkg >> p)) return cpus > 0 ? CPU_COUNT(&set) : 1;
    cores.insert({p, c});
  }
  return cores.empty() ? 1 : int(cores.size());
}

}  // namespace parley
