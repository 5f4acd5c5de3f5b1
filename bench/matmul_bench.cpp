// One packed Q8_0 or Q4_0 matrix times n tokens on one thread, timed by the
// thread's CPU time (best of 200), so that other tenants of a shared host
// move the figure less than wall-clock timing does:
//   bench_matmul ROWS COLS N [q8_0|q4_0]
// The kernel is the one matmul() picks (PARLEY_ISA, PARLEY_AMX_MIN_TOKENS,
// PARLEY_AMX_BF16_MIN_TOKENS).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "random_matrix.h"
#include "thread_time.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"

int main(int argc, char** argv) {
  using namespace parley;
  if (argc < 4) {
    std::fprintf(stderr, "usage: bench_matmul ROWS COLS N [q8_0|q4_0]\n");
    return 2;
  }
  const int64_t rows = std::atoll(argv[1]), cols = std::atoll(argv[2]), n = std::atoll(argv[3]);
  const DType type = argc > 4 && std::string(argv[4]) == "q4_0" ? DType::Q4_0 : DType::Q8_0;
  std::mt19937 rng(1);
  const RandomMatrix m = random_matrix(type, rows, cols, rng);
  const MatrixView& view = m.view;
  std::vector<float> x(size_t(n * cols)), y(size_t(rows * n));
  fill_normal(x, rng);
  ThreadPool pool(1);
  double best = 1e30;
  for (int rep = 0; rep < 200; ++rep) {
    const double t0 = thread_seconds();
    matmul(view, x.data(), y.data(), n, pool);
    best = std::min(best, thread_seconds() - t0);
  }
  std::printf("%s %lldx%lld, %lld tokens, isa %s%s: %.3f ms, %.3f TOP/s\n", std::string(dtype_name(type)).c_str(),
              (long long)rows, (long long)cols, (long long)n, std::string(isa_name(active_isa())).c_str(),
              view.packed ? " (packed)" : "", best * 1e3, 2.0 * double(rows * cols * n) / best / 1e12);
}
