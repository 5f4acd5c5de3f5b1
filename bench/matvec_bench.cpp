// Batch-1 decode's matrix-vector products on the whole pool, against the
// machine's memory read bandwidth: COUNT random matrices (together far larger
// than the last-level cache, so the weights stream from DRAM as in decode)
// each times one token, in turn, 30 passes, wall clock:
//   bench_matvec ROWS COLS COUNT THREADS [TYPE]   (TYPE: q8_0 (default), q4_0, iq4_xs, ...)
// Prints the bandwidth `parley bench` measures, then the products' GB/s
// (best and mean pass), three times: a shared host's bandwidth moves, so the
// two are read side by side.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "random_matrix.h"
#include "kernels/cpu.h"
#include "kernels/dtype.h"
#include "kernels/matmul.h"
#include "kernels/membw.h"

int main(int argc, char** argv) {
  using namespace parley;
  if (argc < 5) {
    std::fprintf(stderr, "usage: bench_matvec ROWS COLS COUNT THREADS [TYPE]\n");
    return 2;
  }
  const int64_t rows = std::atoll(argv[1]), cols = std::atoll(argv[2]);
  const int count = std::atoi(argv[3]), threads = std::atoi(argv[4]);
  const std::optional<DType> parsed = argc > 5 ? dtype_from_name(argv[5]) : DType::Q8_0;
  if (!parsed) {
    std::fprintf(stderr, "unknown type %s\n", argv[5]);
    return 2;
  }
  const DType type = *parsed;
  std::mt19937 rng(1);
  std::vector<RandomMatrix> ms;
  for (int i = 0; i < count; ++i) ms.push_back(random_matrix(type, rows, cols, rng));
  std::vector<float> x(static_cast<size_t>(cols)), y(static_cast<size_t>(rows));
  fill_normal(x, rng);
  ThreadPool pool(threads);
  const double bytes = double(row_bytes(type, uint64_t(cols)) * uint64_t(rows)) * count;
  std::printf("%s %lldx%lld x %d matrices (%.1f MB), %d threads, isa %s%s\n", std::string(dtype_name(type)).c_str(),
              (long long)rows, (long long)cols, count, bytes / 1e6, pool.size(),
              std::string(isa_name(active_isa())).c_str(), ms.empty() || !ms[0].view.packed ? "" : " (packed)");
  constexpr int kPasses = 30;
  const size_t bandwidth_bytes = std::max(size_t(256) << 20, size_t(bytes) * 4);  // far above the caches
  for (int round = 0; round < 3; ++round) {
    const double bandwidth = measure_read_bandwidth(pool, bandwidth_bytes, 3);
    double best = 1e30, total = 0;
    for (int pass = 0; pass < kPasses; ++pass) {
      const auto t0 = std::chrono::steady_clock::now();
      for (const RandomMatrix& m : ms) matmul(m.view, x.data(), y.data(), 1, pool);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, s);
      total += s;
    }
    std::printf("bandwidth %.1f GB/s; matrix-vector best %.1f GB/s, mean %.1f GB/s (%.3f ms a pass)\n",
                bandwidth / 1e9, bytes / best / 1e9, bytes / (total / kPasses) / 1e9, total / kPasses * 1e3);
  }
}
