#include "kernels/membw.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include <immintrin.h>

#include "kernels/cpu.h"

namespace parley {
namespace {

// Each thread reads its share as two sequential streams, a cache line of each
// in turn, with the widest loads the CPU has. On the Zen 5 guest two threads
// read (GB/s, best of 4, alternating): 512-bit loads 69-75 with one stream,
// 86-90 with two, 74-78 with four; 256-bit 73-79 with one to four; 64-bit 45
// with one, 71 with two (docs/performance.md). Anything less than the best
// would let decode exceed its "bound".
constexpr size_t kStreams = 2;
constexpr size_t kLine = 64 / sizeof(uint64_t);

// Sums of streams of `len` words at p, p + len; then the words after 2 * len.
uint64_t sum_rest(const uint64_t* p, size_t len, size_t n) {
  uint64_t total = 0;
  for (size_t i = kStreams * len; i < n; ++i) total += p[i];
  return total;
}

__attribute__((target("avx512f"))) uint64_t sum_streams_avx512(const uint64_t* p, size_t n) {
  const size_t len = n / kStreams / kLine * kLine;
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  for (size_t i = 0; i < len; i += kLine) {
    a = _mm512_add_epi64(a, _mm512_load_si512(p + i));
    b = _mm512_add_epi64(b, _mm512_load_si512(p + len + i));
  }
  alignas(64) uint64_t lanes[8];  // (not _mm512_reduce_add_epi64: GCC 12.2 warns inside it, bug 105593)
  _mm512_store_si512(lanes, _mm512_add_epi64(a, b));
  uint64_t total = sum_rest(p, len, n);
  for (uint64_t v : lanes) total += v;
  return total;
}

__attribute__((target("avx2"))) uint64_t sum_streams_avx2(const uint64_t* p, size_t n) {
  const size_t len = n / kStreams / kLine * kLine;
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, b0 = a0, b1 = a0;
  for (size_t i = 0; i < len; i += kLine) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
    b0 = _mm256_add_epi64(b0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + len + i)));
    b1 = _mm256_add_epi64(b1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + len + i + 4)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(b0, b1)));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + sum_rest(p, len, n);
}

uint64_t sum_streams_scalar(const uint64_t* p, size_t n) {
  const size_t len = n / kStreams / kLine * kLine;
  uint64_t acc[kStreams][kLine] = {};  // independent chains
  for (size_t i = 0; i < len; i += kLine)
    for (size_t s = 0; s < kStreams; ++s)
      for (size_t k = 0; k < kLine; ++k) acc[s][k] += p[s * len + i + k];
  uint64_t total = sum_rest(p, len, n);
  for (const auto& a : acc)
    for (uint64_t v : a) total += v;
  return total;
}

// By what the CPU has, not the forced path (PARLEY_ISA): the bound is the machine's.
uint64_t sum_streams(const uint64_t* p, size_t n) {
  static const Isa isa = detect_isa();
  if (isa >= Isa::Avx512) return sum_streams_avx512(p, n);
  return isa >= Isa::Avx2 ? sum_streams_avx2(p, n) : sum_streams_scalar(p, n);
}

}  // namespace

BandwidthProbe::BandwidthProbe(ThreadPool& pool, size_t bytes)
    : pool_(pool), buf_(bytes / sizeof(uint64_t) * sizeof(uint64_t)) {  // on huge pages, as the repacked weights are
  auto* buf = reinterpret_cast<uint64_t*>(buf_.data());
  pool_.parallel_for(int64_t(buf_.size() / sizeof(uint64_t)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) buf[size_t(i)] = uint64_t(i);
  });
}

double BandwidthProbe::measure(int reps) {
  const auto* buf = reinterpret_cast<const uint64_t*>(buf_.data());
  const size_t n = buf_.size() / sizeof(uint64_t);
  std::vector<uint64_t> sums(size_t(pool_.size()) * 8);  // keeps the reads alive; 64 bytes apart
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    pool_.run([&](int t, int nt) {
      const size_t b = n * size_t(t) / size_t(nt), e = n * size_t(t + 1) / size_t(nt);
      sums[size_t(t) * 8] += sum_streams(buf + b, e - b);
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, double(n * sizeof(uint64_t)) / s);
  }
  volatile uint64_t sink = 0;
  for (auto v : sums) sink = sink + v;
  return best;
}

double measure_read_bandwidth(ThreadPool& pool, size_t bytes, int reps) {
  return BandwidthProbe(pool, bytes).measure(reps);
}

}  // namespace parley
