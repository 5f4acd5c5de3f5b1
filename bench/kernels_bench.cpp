// bench_kernels: matvec (decode) speed of every SIMD path against the
// machine's measured memory read bandwidth, on the matrices of a 110M-parameter
// Llama (dim 768, hidden 2048, 12 layers, vocab 32000) cycled in model order so
// the weights never sit in cache; then prefill speed against n separate matvecs
// (row-major and, where the loader would pack them, packed Q8_0 matrices),
// with the int8 peak of the machine (AVX512-VNNI, else the AVX2 Q8_0 sequence)
// to compare TOP/s against.
//   bench_kernels [threads=2] [types=Q8_0,Q4_0,Q4_K,F16]
// Needs about 256 MB of memory per type.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/membw.h"
#include "kernels/packed_gemm.h"
#include "kernels/quant.h"
#include "util/aligned_bytes.h"

namespace parley {

double vnni_peak_ops(ThreadPool& pool);           // int8_peak_vnni.cpp
double vnni_rescaled_peak_ops(ThreadPool& pool);  // int8_peak_vnni.cpp
double avx2_int8_peak_ops(ThreadPool& pool);  // int8_peak_avx2.cpp

namespace {

using Clock = std::chrono::steady_clock;

struct Matrix {
  std::string shape;
  MatrixView view;
  std::unique_ptr<uint8_t[]> data;
  uint64_t bytes;
  AlignedBytes packed = {};  // packed_gemm.h layout, when the CPU has a use for it
};

// The same matrices with their packed copies attached (the model loader's
// default where packing_helps), or null where there is none.
std::vector<Matrix> packed_matrices(const std::vector<Matrix>& ms, size_t count) {
  std::vector<Matrix> out;
  for (size_t i = 0; i < count; ++i) {
    const Matrix& m = ms[i];
    if (!packing_helps(m.view)) return {};
    Matrix p{m.shape, m.view, nullptr, m.bytes, AlignedBytes(packed_bytes(m.view))};
    pack_matrix(m.view, p.packed.data());
    p.view.packed = p.packed.data();
    out.push_back(std::move(p));
  }
  return out;
}

struct ModelSet {
  std::vector<Matrix> matrices;
  uint64_t model_bytes;  // of one copy of the model
};

// The weights of one token's forward pass, in order; random values. The set
// is repeated until it holds min_bytes, so that a pass over it reads from
// memory, not from the last-level cache.
ModelSet model_matrices(DType type, uint64_t min_bytes) {
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
  uint64_t total = 0;
  for (const Matrix& m : out) total += m.bytes;
  const size_t one_model = out.size();
  for (uint64_t have = total; have < min_bytes; have += total)
    for (size_t i = 0; i < one_model; ++i) {
      const Matrix& src = out[i];
      Matrix m{src.shape, src.view, std::make_unique<uint8_t[]>(src.bytes), src.bytes};
      std::memcpy(m.data.get(), src.data.get(), src.bytes);
      m.view.data = m.data.get();
      out.push_back(std::move(m));
    }
  return {std::move(out), total};
}

constexpr uint64_t kMinBytes = uint64_t(256) << 20;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Per shape (and "model": all of them), the median over `passes` of the
// achieved GB/s and of its ratio to a bandwidth sample taken just before the
// pass: the host's bandwidth drifts, so each pass is judged by its own.
struct Result {
  double gbs, ratio;
};
std::map<std::string, Result> matvec_passes(const std::vector<Matrix>& ms, BandwidthProbe& probe, ThreadPool& pool,
                                            int passes) {
  std::vector<float> x(2048), y(32000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 17) * 0.1f - 0.8f;
  std::map<std::string, std::vector<double>> gbs, ratio;
  for (int p = 0; p < passes; ++p) {
    const double bw = probe.measure(1);
    std::map<std::string, std::pair<uint64_t, double>> pass;  // bytes, seconds
    for (const Matrix& m : ms) {
      const auto t0 = Clock::now();
      matmul(m.view, x.data(), y.data(), 1, pool);
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      for (const std::string& key : {m.shape, std::string("model")}) {
        pass[key].first += m.bytes;
        pass[key].second += s;
      }
    }
    for (const auto& [shape, bs] : pass) {
      gbs[shape].push_back(double(bs.first) / bs.second / 1e9);
      ratio[shape].push_back(double(bs.first) / bs.second / bw);
    }
  }
  std::map<std::string, Result> out;
  for (const auto& [shape, v] : gbs) out[shape] = {median(v), median(ratio[shape])};
  return out;
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
  std::vector<ModelSet> sets;
  for (const DType type : types) sets.push_back(model_matrices(type, kMinBytes));
  BandwidthProbe probe(pool, kMinBytes);
  std::vector<double> bw;
  for (int i = 0; i < 5; ++i) bw.push_back(probe.measure(1));
  std::printf("memory read bandwidth, %d threads: %.1f GB/s (median of 5 sums of %llu MB)\n", threads,
              median(bw) / 1e9, (unsigned long long)(kMinBytes >> 20));
  if (isa_supported(Isa::Vnni)) {
    const double plain = vnni_peak_ops(pool), rescaled = vnni_rescaled_peak_ops(pool);
    std::printf("int8 peak, %d threads: %.3f TOP/s (vpdpbusd chains in registers)\n", threads, plain / 1e12);
    std::printf("int8 peak with the Q8_0 kernel's rescaling, %d threads: %.3f TOP/s, %.0f%% of the above "
                "(8 vpdpbusd, then a conversion, a multiply and an FMA per 32-element block)\n",
                threads, rescaled / 1e12, 100.0 * rescaled / plain);
  } else if (isa_supported(Isa::Avx2))
    std::printf("int8 peak, %d threads: %.3f TOP/s (AVX2: the Q8_0 kernel's vpsignb, vpmaddubsw, vpmaddwd, vpaddd chains in registers)\n",
                threads, avx2_int8_peak_ops(pool) / 1e12);
  std::printf("\n");
  std::printf("matvec (n_tokens = 1) over a 110M-parameter model's matrices, repeated to >= %llu MB:\n",
              (unsigned long long)(kMinBytes >> 20));
  std::printf("GB/s of weights streamed, and %% of the bandwidth sampled just before (medians of 10 passes)\n");
  std::printf("%-13s %15s %15s %15s %15s %15s\n", "type  path", "768x768", "2048x768", "768x2048", "32000x768",
              "model pass");
  const char* order[] = {"768x768", "2048x768", "768x2048", "32000x768", "model"};
  const auto print_row = [&](size_t k, const std::string& path, const std::map<std::string, Result>& results) {
    std::printf("%-5s %-7s", std::string(dtype_name(types[k])).c_str(), path.c_str());
    for (const char* shape : order) {
      const Result& r = results.at(shape);
      std::printf(" %6.1f (%4.0f%%)", r.gbs, 100.0 * r.ratio);
    }
    std::printf("   %.2f ms/token\n", double(sets[k].model_bytes) / (results.at("model").gbs * 1e9) * 1e3);
  };
  for (size_t k = 0; k < types.size(); ++k) {
    for (int i = int(Isa::Scalar); i <= int(Isa::Vnni); ++i) {
      if (!isa_supported(Isa(i))) continue;
      set_active_isa(Isa(i));
      print_row(k, std::string(isa_name(Isa(i))), matvec_passes(sets[k].matrices, probe, pool, Isa(i) == Isa::Scalar ? 1 : 10));
    }
    set_active_isa(detect_isa());
    if (const auto packed = packed_matrices(sets[k].matrices, sets[k].matrices.size()); !packed.empty())
      print_row(k, "packed", matvec_passes(packed, probe, pool, 10));
  }
  std::printf("\nprefill, one layer's 7 matrices, %s path: n tokens at once vs n separate matvecs\n"
              "(both on cache-warm weights: the compute side of prefill)\n",
              std::string(isa_name(detect_isa())).c_str());
  set_active_isa(detect_isa());
  const auto prefill_rows = [&](const std::string& label, const std::vector<Matrix>& ms) {
    double macs = 0;  // multiply-adds per token in the 7 matrices
    for (size_t i = 0; i < 7; ++i) macs += double(ms[i].view.rows) * double(ms[i].view.cols);
    const double one = prefill_seconds(ms, 7, 1, pool);
    for (const int64_t n : {4, 16, 64, 256}) {
      const double s = prefill_seconds(ms, 7, n, pool);
      std::printf("%-12s n=%-3lld %8.2f ms  (%.1fx faster than %lld matvecs, %.3f TOP/s)\n", label.c_str(),
                  (long long)n, s * 1e3, one * double(n) / s, (long long)n, 2 * macs * double(n) / s / 1e12);
    }
  };
  for (size_t k = 0; k < types.size(); ++k) {
    const std::string type(dtype_name(types[k]));
    prefill_rows(type, sets[k].matrices);
    if (const auto packed = packed_matrices(sets[k].matrices, 7);
        !packed.empty())
      prefill_rows(type + " packed", packed);
  }
}

}  // namespace
}  // namespace parley

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const auto types = parley::parse_types(argc > 2 ? argv[2] : "Q8_0,Q4_0,Q4_K,F16");
  parley::bench(threads, types);
}
