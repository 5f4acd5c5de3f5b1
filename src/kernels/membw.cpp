#include "kernels/membw.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace parley {

double measure_read_bandwidth(ThreadPool& pool, size_t bytes, int reps) {
  const size_t n = bytes / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> buf(new uint64_t[n]);
  pool.parallel_for(int64_t(n), [&](int64_t b, int64_t e) {  // first touch on the reading thread
    for (int64_t i = b; i < e; ++i) buf[size_t(i)] = uint64_t(i);
  });
  std::vector<uint64_t> sums(size_t(pool.size()) * 8);  // keeps the reads alive; 64 bytes apart
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.run([&](int t, int nt) {
      const size_t b = n * size_t(t) / size_t(nt), e = n * size_t(t + 1) / size_t(nt);
      uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;  // independent chains; integer adds vectorise
      size_t i = b;
      for (; i + 4 <= e; i += 4) {
        a0 += buf[i];
        a1 += buf[i + 1];
        a2 += buf[i + 2];
        a3 += buf[i + 3];
      }
      for (; i < e; ++i) a0 += buf[i];
      sums[size_t(t) * 8] += a0 + a1 + a2 + a3;
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, double(n * sizeof(uint64_t)) / s);
  }
  volatile uint64_t sink = 0;
  for (auto v : sums) sink = sink + v;
  return best;
}

}  // namespace parley
