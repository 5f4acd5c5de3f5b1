// Whether a batched matrix product reads its weights while it computes:
// one packed matrix times TOKENS tokens on the pool, timed hot (the same
// copy again, from the caches) and cold (COPIES copies in turn, together far
// larger than the caches, as in a batched decode step), then the same for one
// token, whose cold time is the reading alone. If reading and computing
// overlap, cold(TOKENS) is near max(hot(TOKENS), cold(1)); if they take
// turns, near the sum. Wall clock, best of several passes, three rounds:
//   bench_overlap ROWS COLS TOKENS COPIES THREADS [TYPE: q8_0 (default), q4_0, iq4_xs, q3_k]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "random_matrix.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"

namespace {

using namespace parley;

struct Copies {
  const RandomMatrix& m;
  AlignedBytes bytes;  // the packed matrix, COPIES times
  size_t size;
};

// Mean microseconds of one product over `count` copies, best of `passes`.
double product_us(const Copies& c, int count, int passes, const std::vector<float>& x, std::vector<float>& y,
                  int64_t n, ThreadPool& pool) {
  double best = 1e30;
  for (int pass = 0; pass < passes; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i) {
      MatrixView v = c.m.view;
      v.packed = c.bytes.data() + c.size * size_t(i);
      matmul(v, x.data(), y.data(), n, pool);
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / count);
  }
  return best * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: bench_overlap ROWS COLS TOKENS COPIES THREADS [TYPE]\n");
    return 2;
  }
  const int64_t rows = std::atoll(argv[1]), cols = std::atoll(argv[2]), n = std::max<int64_t>(1, std::atoll(argv[3]));
  const int copies = std::max(1, std::atoi(argv[4])), threads = std::atoi(argv[5]);
  const std::optional<DType> parsed = argc > 6 ? dtype_from_name(argv[6]) : DType::Q8_0;
  if (!parsed) {
    std::fprintf(stderr, "bench_overlap: unknown type %s\n", argv[6]);
    return 2;
  }
  const DType type = *parsed;
  if (rows < 1 || cols < 1 || cols % 32 != 0 || threads < 1) {
    std::fprintf(stderr, "bench_overlap: ROWS and THREADS must be positive, COLS a positive multiple of 32\n");
    return 1;
  }
  std::mt19937 rng(1);
  const RandomMatrix m = random_matrix(type, rows, cols, rng);
  if (!m.view.packed) {
    std::fprintf(stderr, "bench_overlap: this CPU's path does not pack %s matrices\n",
                 std::string(dtype_name(type)).c_str());
    return 2;
  }
  const size_t size = packed_bytes(m.view);
  Copies c{m, AlignedBytes(size * size_t(copies)), size};
  for (int i = 0; i < copies; ++i) std::memcpy(c.bytes.data() + size * size_t(i), m.view.packed, size);
  std::vector<float> x(size_t(n * cols)), y(size_t(rows * n));
  fill_normal(x, rng);
  ThreadPool pool(threads);
  std::printf("%s %lldx%lld packed (%.2f MB, %d copies), %lld tokens, %d threads, isa %s\n",
              std::string(dtype_name(type)).c_str(), (long long)rows, (long long)cols, double(size) / 1e6, copies,
              (long long)n, pool.size(), std::string(isa_name(active_isa())).c_str());
  const double ops = 2.0 * double(rows * cols * n);
  for (int round = 0; round < 3; ++round) {
    const double hot = product_us(c, 1, 200, x, y, n, pool), cold = product_us(c, copies, 3, x, y, n, pool);
    const double read = product_us(c, copies, 3, x, y, 1, pool);
    std::printf("hot %.1f us (%.3f TOP/s), cold %.1f us, reading alone %.1f us (%.1f GB/s): cold is %.2f x "
                "max(hot, reading), %.2f x their sum\n",
                hot, ops / hot / 1e6, cold, read, double(size) / read / 1e3, cold / std::max(hot, read),
                cold / (hot + read));
  }
}
