// The int8 multiply-add peak of AVX512-VNNI on this machine: independent
// vpdpbusd chains (12 accumulators hide the latency), no memory traffic.
// Compiled with -mavx512vnni; called only when the CPU has it.
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <vector>

#include "int8_peak.h"

namespace parley {
namespace {

// Rescaled: the packed Q8_0 kernel's work per 32-element block and 16 rows
// x 1 token, 8 vpdpbusd from a fresh start, then one conversion, one
// multiply of the two scales and one FMA into a float sum; otherwise the
// chains run on. Only the vpdpbusd products are counted as operations.
template <bool Rescaled>
double peak(ThreadPool& pool) {
  std::vector<float> sink(size_t(pool.size()) * 16);  // one vector per thread
  return ops_per_second(pool, 2.0 * 64 * 8 * kPeakChains * double(kPeakIters / 8), [&](int t) {  // a multiply-add is 2 ops
    __m512i acc[kPeakChains];
    __m512 sum[kPeakChains], dw[kPeakChains];
    for (int i = 0; i < kPeakChains; ++i) {
      acc[i] = _mm512_set1_epi32(i);
      sum[i] = _mm512_setzero_ps();
      dw[i] = _mm512_set1_ps(1.0f + 0.001f * float(i));
    }
    __m512i u = _mm512_set1_epi8(3);
    __m512 dx = _mm512_set1_ps(0.5f);
    const __m512i s = _mm512_set1_epi8(5);
    for (long it = 0; it < kPeakIters / 8; ++it) {
#pragma GCC unroll 12
      for (int i = 0; i < kPeakChains; ++i) {
        __m512i x = Rescaled ? _mm512_set1_epi32(i) : acc[i];
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) x = _mm512_dpbusd_epi32(x, u, s);
        if constexpr (Rescaled) sum[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(x), _mm512_mul_ps(dw[i], dx), sum[i]);
        else acc[i] = x;
      }
      asm volatile("" : "+v"(u), "+v"(dx));  // keeps the loop from being folded away
    }
    __m512 total = _mm512_setzero_ps();
    for (int i = 0; i < kPeakChains; ++i) total = _mm512_add_ps(total, _mm512_add_ps(sum[i], _mm512_cvtepi32_ps(acc[i])));
    _mm512_storeu_ps(&sink[size_t(t) * 16], total);
  });
}

}  // namespace

double vnni_peak_ops(ThreadPool& pool) { return peak<false>(pool); }
double vnni_rescaled_peak_ops(ThreadPool& pool) { return peak<true>(pool); }

}  // namespace parley
