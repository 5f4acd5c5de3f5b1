#include "kernels/membw.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "util/aligned_bytes.h"

namespace parley {
namespace {

// Each thread reads its share as this many interleaved sequential streams, a
// cache line of each in turn. One stream per thread leaves bandwidth unused:
// on the Zen 5 guest two threads summed 18-46 GB/s with one stream each and
// 58-72 GB/s with four, about what batch-1 decode reached (docs/performance.md).
constexpr size_t kStreams = 4;
constexpr size_t kLine = 64 / sizeof(uint64_t);

uint64_t sum_streams(const uint64_t* p, size_t n) {
  const size_t len = n / kStreams / kLine * kLine;
  uint64_t acc[kStreams][kLine] = {};  // independent chains; the adds vectorise
  for (size_t i = 0; i < len; i += kLine)
    for (size_t s = 0; s < kStreams; ++s)
      for (size_t k = 0; k < kLine; ++k) acc[s][k] += p[s * len + i + k];
  uint64_t total = 0;
  for (size_t i = kStreams * len; i < n; ++i) total += p[i];
  for (const auto& a : acc)
    for (uint64_t v : a) total += v;
  return total;
}

}  // namespace

double measure_read_bandwidth(ThreadPool& pool, size_t bytes, int reps) {
  const size_t n = bytes / sizeof(uint64_t);
  AlignedBytes storage(n * sizeof(uint64_t));  // on huge pages, as the repacked weights are
  auto* buf = reinterpret_cast<uint64_t*>(storage.data());
  pool.parallel_for(int64_t(n), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) buf[size_t(i)] = uint64_t(i);
  });
  std::vector<uint64_t> sums(size_t(pool.size()) * 8);  // keeps the reads alive; 64 bytes apart
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.run([&](int t, int nt) {
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

}  // namespace parley
