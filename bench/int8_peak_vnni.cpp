// The int8 multiply-add peak of AVX512-VNNI on this machine: independent
// vpdpbusd chains (12 accumulators hide the latency), no memory traffic.
// Compiled with -mavx512vnni; called only when the CPU has it.
#include <immintrin.h>

#include <vector>

#include "int8_peak.h"

namespace parley {

double vnni_peak_ops(ThreadPool& pool) {
  std::vector<int32_t> sink(size_t(pool.size()) * 16);  // one vector per thread
  return ops_per_second(pool, 2.0 * 64 * kPeakChains * double(kPeakIters), [&](int t) {  // a multiply-add is 2 ops
    __m512i acc[kPeakChains];
    for (int i = 0; i < kPeakChains; ++i) acc[i] = _mm512_set1_epi32(i);
    __m512i u = _mm512_set1_epi8(3);
    const __m512i s = _mm512_set1_epi8(5);
    for (long it = 0; it < kPeakIters; ++it) {
#pragma GCC unroll 12
      for (int i = 0; i < kPeakChains; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], u, s);
      asm volatile("" : "+v"(u));  // keeps the loop from being folded away
    }
    __m512i sum = acc[0];
    for (int i = 1; i < kPeakChains; ++i) sum = _mm512_add_epi32(sum, acc[i]);
    _mm512_storeu_si512(&sink[size_t(t) * 16], sum);
  });
}

}  // namespace parley
