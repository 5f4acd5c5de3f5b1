// The int8 multiply-add peak of AVX2 on this machine, for the sequence the
// packed Q8_0 kernel uses per 32 products (no int8 dot-product instruction):
// vpsignb (the weights' signs onto the activations), vpmaddubsw, vpmaddwd
// (pairs to int32), vpaddd; 12 independent chains, operands in registers, no
// memory traffic. Compiled with -mavx2.
#include <immintrin.h>

#include <vector>

#include "int8_peak.h"

namespace parley {

double avx2_int8_peak_ops(ThreadPool& pool) {
  std::vector<int32_t> sink(size_t(pool.size()) * 8);  // one vector per thread
  return ops_per_second(pool, 2.0 * 32 * kPeakChains * double(kPeakIters), [&](int t) {  // a multiply-add is 2 ops
    __m256i acc[kPeakChains], w[kPeakChains], mag[kPeakChains];  // |w| once, as the kernel does per weight line
    for (int i = 0; i < kPeakChains; ++i) {
      acc[i] = _mm256_set1_epi32(i);
      w[i] = _mm256_set1_epi8(char(i - 6));
      mag[i] = _mm256_abs_epi8(w[i]);
    }
    __m256i x = _mm256_set1_epi8(5);
    const __m256i ones = _mm256_set1_epi16(1);
    for (long it = 0; it < kPeakIters; ++it) {
#pragma GCC unroll 12
      for (int i = 0; i < kPeakChains; ++i) {
        const __m256i p = _mm256_maddubs_epi16(mag[i], _mm256_sign_epi8(x, w[i]));
        acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(p, ones));
      }
      asm volatile("" : "+x"(x));  // keeps the loop from being folded away
    }
    __m256i sum = acc[0];
    for (int i = 1; i < kPeakChains; ++i) sum = _mm256_add_epi32(sum, acc[i]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(&sink[size_t(t) * 8]), sum);
  });
}

}  // namespace parley
