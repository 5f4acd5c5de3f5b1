#pragma once
// The timing shared by the int8 peak loops (int8_peak_*.cpp, each compiled
// with its own ISA flags): `chains(thread)` on every pool thread at once; its
// operation count per thread over the wall time, in operations per second.
#include <chrono>

#include "kernels/thread_pool.h"

namespace parley {

constexpr long kPeakIters = 20'000'000;  // per chain and thread
constexpr int kPeakChains = 12;          // independent accumulators: enough to hide the latency

template <class Chains>
double ops_per_second(ThreadPool& pool, double ops_per_thread, const Chains& chains) {
  const auto t0 = std::chrono::steady_clock::now();
  pool.run([&](int t, int) { chains(t); });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return ops_per_thread * pool.size() / s;
}

}  // namespace parley
