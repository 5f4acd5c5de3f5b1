// The int8 multiply-add peak of AVX512-VNNI on this machine: independent
// vpdpbusd chains (12 accumulators hide the latency), no memory traffic.
// Compiled with -mavx512vnni; called only when the CPU has it.
#include <immintrin.h>

#include <chrono>
#include <vector>

#include "kernels/thread_pool.h"

namespace parley {

double vnni_peak_ops(ThreadPool& pool) {
  constexpr long kIters = 20'000'000;
  constexpr int kChains = 12;
  std::vector<int32_t> sink(size_t(pool.size()) * 16);  // one vector per thread
  const auto t0 = std::chrono::steady_clock::now();
  pool.run([&](int t, int) {
    __m512i acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(i);
    __m512i u = _mm512_set1_epi8(3);
    const __m512i s = _mm512_set1_epi8(5);
    for (long it = 0; it < kIters; ++it) {
#pragma GCC unroll 12
      for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], u, s);
      asm volatile("" : "+v"(u));  // keeps the loop from being folded away
    }
    __m512i sum = acc[0];
    for (int i = 1; i < kChains; ++i) sum = _mm512_add_epi32(sum, acc[i]);
    _mm512_storeu_si512(&sink[size_t(t) * 16], sum);
  });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 2.0 * 64 * kChains * double(kIters) * pool.size() / s;  // a multiply-add counts as 2 ops
}

}  // namespace parley
