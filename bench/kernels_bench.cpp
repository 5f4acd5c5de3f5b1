// bench_kernels: matvec (decode) speed of every SIMD path against the
// machine's measured memory read bandwidth, on the matrices of a 110M-parameter
// Llama (dim 768, hidden 2048, 12 layers, vocab 32000) cycled in model order so
// the weights never sit in cache; then prefill speed against n separate matvecs.
//   bench_kernels [threads=2] [types=Q8_0,Q4_0,Q4_K,F16]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/membw.h"
#include "kernels/quant.h"

namespace parley {
namespace {

using Clock = std::chrono::steady_clock;

struct Matrix {
  std::string shape;
  MatrixView view;
  std::unique_ptr<uint8_t[]> data;
  uint64_t bytes;
};

// The weights of one token's forward pass, in order; random values.
std::vector<Matrix> model_matrices(DType type) {
  struct Shape { int64_t rows, cols, count; };
  const Shape per_layer[] = {{768, 768, 4}, {2048, 768, 2}, {768, 2048, 1}};
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> row(2048);
  std::vector<Matrix> out;
  auto add = [&](int64_t rows, int64_t cols) {
    const uint64_t rb = row_bytes(type, uint64_t(cols));
    Matrix m{std::to_string(rows) + "x" + std::to_string(cols), {}, std::make_unique<uint8_t[]>(rb * uint64_t(rows)),
             rb * uint64_t(rows)};
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) row[size_t(c)] = normal(rng);
      quantize_row(type, row.data(), m.data.get() + uint64_t(r) * rb, cols);
    }
    m.view = {type, rows, cols, m.data.get()};
    out.push_back(std::move(m));
  };
  for (int layer = 0; layer < 12; ++layer)
    for (const Shape& s : per_layer)
      for (int i = 0; i < s.count; ++i) add(s.rows, s.cols);
  add(32000, 768);
  return out;
}

struct ShapeStats {
  uint64_t bytes = 0;
  double seconds = 0;
};

// Passes over the model; per shape (and "model" for the whole pass), the bytes
// of one pass and its best time over the passes (a shared machine's noise only
// ever adds time).
std::map<std::string, ShapeStats> matvec_passes(const std::vector<Matrix>& ms, ThreadPool& pool, int passes) {
  std::vector<float> x(2048), y(32000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 17) * 0.1f - 0.8f;
  std::map<std::string, ShapeStats> best;
  for (int p = 0; p < passes; ++p) {
    std::map<std::string, ShapeStats> pass;
    for (const Matrix& m : ms) {
      const auto t0 = Clock::now();
      matmul(m.view, x.data(), y.data(), 1, pool);
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      for (const std::string& key : {m.shape, std::string("model")}) {
        pass[key].bytes += m.bytes;
        pass[key].seconds += s;
      }
    }
    for (const auto& [shape, st] : pass)
      if (p == 0 || st.seconds < best[shape].seconds) best[shape] = st;
  }
  return best;
}

// Seconds for one n_tokens matmul of each of the first `count` matrices.
double prefill_seconds(const std::vector<Matrix>& ms, size_t count, int64_t n_tokens, ThreadPool& pool) {
  std::vector<float> x(size_t(2048 * n_tokens)), y(size_t(32000 * n_tokens));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 13) * 0.1f - 0.6f;
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    for (size_t i = 0; i < count; ++i) matmul(ms[i].view, x.data(), y.data(), n_tokens, pool);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

std::vector<DType> parse_types(const char* arg) {
  std::vector<DType> types;
  std::string s = arg;
  for (size_t start = 0; start <= s.size();) {
    const size_t end = std::min(s.find(',', start), s.size());
    if (const auto t = dtype_from_name(s.substr(start, end - start))) types.push_back(*t);
    start = end + 1;
  }
  return types;
}

void bench(int threads, const std::vector<DType>& types) {
  ThreadPool pool(threads);
  const double bw = measure_read_bandwidth(pool);
  std::printf("memory read bandwidth, %d threads: %.1f GB/s (1 GiB summed, best of 5)\n\n", threads, bw / 1e9);
  std::printf("matvec (n_tokens = 1), GB/s of weights streamed and %% of that bandwidth:\n");
  std::printf("%-5s %-7s %15s %15s %15s %15s %15s\n", "type", "path", "768x768", "2048x768", "768x2048",
              "32000x768", "model pass");
  const char* order[] = {"768x768", "2048x768", "768x2048", "32000x768", "model"};
  for (const DType type : types) {
    const auto ms = model_matrices(type);
    for (int i = int(Isa::Scalar); i <= int(Isa::Vnni); ++i) {
      if (!isa_supported(Isa(i))) continue;
      set_active_isa(Isa(i));
      const auto stats = matvec_passes(ms, pool, Isa(i) == Isa::Scalar ? 1 : 10);
      std::printf("%-5s %-7s", std::string(dtype_name(type)).c_str(), std::string(isa_name(Isa(i))).c_str());
      for (const char* shape : order) {
        const ShapeStats& st = stats.at(shape);
        const double gbs = double(st.bytes) / st.seconds / 1e9;
        std::printf(" %6.1f (%4.0f%%)", gbs, 100.0 * gbs * 1e9 / bw);
      }
      std::printf("   %.2f ms/token\n", stats.at("model").seconds * 1e3);
    }
  }
  std::printf("\nprefill, one layer's 7 matrices, %s path: n tokens at once vs n matvecs\n",
              std::string(isa_name(detect_isa())).c_str());
  set_active_isa(detect_isa());
  for (const DType type : types) {
    const auto ms = model_matrices(type);
    const double one = prefill_seconds(ms, 7, 1, pool);
    for (const int64_t n : {4, 16, 64}) {
      const double s = prefill_seconds(ms, 7, n, pool);
      std::printf("%-5s n=%-3lld %8.2f ms  (%.1fx faster than %lld matvecs)\n", std::string(dtype_name(type)).c_str(),
                  (long long)n, s * 1e3, one * double(n) / s, (long long)n);
    }
  }
}

}  // namespace
}  // namespace parley

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const auto types = parley::parse_types(argc > 2 ? argv[2] : "Q8_0,Q4_0,Q4_K,F16");
  parley::bench(threads, types);
}
