// bench_ops: the element-wise ops of the forward pass (ops.h) and the int8
// activation quantization before each Q8_0 / Q4_0 matmul (acts.h) on one thread,
// in ns per element, on rows of the given width (default 768, 2048 and 32000:
// a 110M Llama's model, FFN and vocabulary widths), 64 rows at a time as in a
// batched step, from L2. CPU time, best of 50 passes; PARLEY_ISA picks the path.
//   bench_ops [width ...]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "kernels/acts.h"
#include "kernels/cpu.h"
#include "kernels/ops.h"
#include "thread_time.h"

namespace {

// Best CPU time per element of f(row) over every row of `rows` rows of width n.
template <class F>
double ns_per_element(int64_t n, int64_t rows, F f) {
  double best = 1e30;
  for (int pass = 0; pass < 50; ++pass) {
    const double t0 = thread_seconds();
    for (int64_t r = 0; r < rows; ++r) f(r);
    best = std::min(best, thread_seconds() - t0);
  }
  return best * 1e9 / double(n * rows);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace parley;
  std::vector<int64_t> widths;
  for (int i = 1; i < argc; ++i) widths.push_back(std::atoll(argv[i]));
  if (widths.empty()) widths = {768, 2048, 32000};
  const std::string_view isa = isa_name(active_isa());
  std::printf("path %.*s\n%8s %9s %9s %9s %9s %9s %9s %9s %9s  (ns per element)\n", int(isa.size()), isa.data(), "width",
              "rmsnorm", "softmax", "swiglu", "add", "dot", "axpy", "quant8", "argmax");
  for (int64_t n : widths) {
    const int64_t rows = std::max<int64_t>(1, std::min<int64_t>(64, 64 * 1024 / n));
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const size_t size = size_t(n * rows);
    std::vector<float> a(size), b(size), out(size), w(static_cast<size_t>(n));
    for (float& v : a) v = normal(rng);
    for (float& v : b) v = normal(rng);
    for (float& v : w) v = normal(rng);
    const auto row = [&](std::vector<float>& v, int64_t r) { return v.data() + r * n; };
    float sink = 0.0f;
    const double norm = ns_per_element(n, rows, [&](int64_t r) { rmsnorm(row(out, r), row(a, r), w.data(), n, 1e-5f); });
    const double soft = ns_per_element(n, rows, [&](int64_t r) {
      std::copy_n(row(a, r), n, row(out, r));
      softmax(row(out, r), n);
    });
    const double glu = ns_per_element(n, rows, [&](int64_t r) {
      std::copy_n(row(a, r), n, row(out, r));
      swiglu(row(out, r), row(b, r), n);
    });
    const double plus = ns_per_element(n, rows, [&](int64_t r) { add(row(out, r), row(b, r), n); });
    const double dt = ns_per_element(n, rows, [&](int64_t r) { sink += dot(row(a, r), row(b, r), n); });
    const double ax = ns_per_element(n, rows, [&](int64_t r) { axpy(row(out, r), 1e-3f, row(b, r), n); });
    const auto quantize = active_isa() == Isa::Scalar ? quantize_acts : quantize_acts_avx2;
    std::vector<int8_t> q(size);
    std::vector<float> d(size / 32), ds(size / 32);
    std::vector<int32_t> sums(size / 32);
    const double q8 = ns_per_element(n, rows, [&](int64_t r) {
      const int64_t b = r * n / 32;
      quantize(row(a, r), n / 32, 32, q.data() + r * n, d.data() + b, ActSums{ds.data() + b, sums.data() + b, nullptr});
    });
    int64_t at = 0;
    const double top = ns_per_element(n, rows, [&](int64_t r) { at += argmax(row(a, r), n); });
    std::printf("%8lld %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f%s\n", static_cast<long long>(n), norm, soft, glu,
                plus, dt, ax, q8, top, sink == 12345.0f && at == 7 ? " " : "");
  }
  std::printf("softmax and swiglu include copying their input row first.\n");
}
