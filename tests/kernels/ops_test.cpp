// Every op on every available path against a double-precision reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu.h"
#include "kernels/ops.h"
#include "kernels/tanh_ops.h"
#include "util/fp16.h"

namespace parley {
namespace {

std::vector<float> random_vec(int64_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = normal(rng);
  return v;
}

// Scalar, AVX2 and AVX-512 where the CPU has them (the wider paths use these
// ops; AVX-512 has its own only for some).
std::vector<Isa> paths() {
  std::vector<Isa> p{Isa::Scalar};
  for (const Isa isa : {Isa::Avx2, Isa::Avx512})
    if (isa_supported(isa)) p.push_back(isa);
  return p;
}

// Lengths around the vector widths, and the usual model sizes.
const int64_t kSizes[] = {1, 3, 8, 13, 64, 100, 768, 4099};
constexpr double kRel = 1e-5;

class OpsTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { set_active_isa(GetParam()); }
  void TearDown() override { set_active_isa(detect_isa()); }
};

TEST_P(OpsTest, Dot) {
  for (const int64_t n : kSizes) {
    const auto a = random_vec(n, 1), b = random_vec(n, 2);
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < n; ++i) {
      ref += double(a[size_t(i)]) * b[size_t(i)];
      mag += std::fabs(double(a[size_t(i)]) * b[size_t(i)]);
    }
    EXPECT_NEAR(dot(a.data(), b.data(), n), ref, kRel * mag) << n;
  }
}

TEST_P(OpsTest, AxpyAndAdd) {
  for (const int64_t n : kSizes) {
    const auto x = random_vec(n, 3);
    auto y = random_vec(n, 4), z = y;
    const auto y0 = y;
    axpy(y.data(), -0.75f, x.data(), n);
    add(z.data(), x.data(), n);
    for (size_t i = 0; i < size_t(n); ++i) {
      const double ax = y0[i] - 0.75 * double(x[i]), sum = double(y0[i]) + x[i];
      EXPECT_NEAR(y[i], ax, kRel * (std::fabs(y0[i]) + 0.75 * std::fabs(x[i]))) << n;
      EXPECT_NEAR(z[i], sum, kRel * (std::fabs(y0[i]) + std::fabs(x[i]))) << n;
    }
  }
}

// m output rows at once: each row's sums against the double reference, and
// bit for bit the row computed alone (a row's result must not depend on the
// rows beside it). `widen` gives x's values as the kernel reads them.
template <class X, class Call>
void check_axpy_rows(const std::vector<X>& x, const std::vector<float>& widened, int64_t rows, int64_t stride,
                     int64_t n, Call call) {
  for (const int64_t m : {1, 2, 3, 4, 5, 7, 9}) {
    const auto a = random_vec(m * rows, 8 + unsigned(m));
    auto y = random_vec(m * n, 9 + unsigned(m));
    const auto y0 = y;
    std::vector<float*> yp;
    std::vector<const float*> ap;
    for (int64_t t = 0; t < m; ++t) {
      yp.push_back(y.data() + t * n);
      ap.push_back(a.data() + t * rows);
    }
    call(yp.data(), ap.data(), m, x.data(), rows, stride, n);
    for (int64_t t = 0; t < m; ++t) {
      std::vector<float> alone(y0.begin() + t * n, y0.begin() + (t + 1) * n);
      float* yt = alone.data();
      const float* at = ap[size_t(t)];
      call(&yt, &at, 1, x.data(), rows, stride, n);
      for (int64_t i = 0; i < n; ++i) {
        double want = y0[size_t(t * n + i)], mag = std::fabs(want);
        for (int64_t r = 0; r < rows; ++r) {
          want += double(at[r]) * widened[size_t(r * stride + i)];
          mag += std::fabs(double(at[r]) * widened[size_t(r * stride + i)]);
        }
        const float got = y[size_t(t * n + i)];
        ASSERT_NEAR(got, want, kRel * mag) << n << " x " << rows << ", row " << t << " of " << m << " at " << i;
        ASSERT_EQ(got, alone[size_t(i)]) << n << " x " << rows << ", row " << t << " of " << m << " at " << i;
      }
    }
  }
}

TEST_P(OpsTest, AxpyRows) {
  for (const int64_t n : kSizes)
    for (const int64_t rows : {1, 5, 16}) {
      const int64_t stride = n + 3;  // rows of x further apart than n
      const auto x = random_vec(rows * stride, 7);
      check_axpy_rows(x, x, rows, stride, n, [](auto... args) { axpy_rows(args...); });
    }
}

// Rows of F16 values: the sums of the widened values.
TEST_P(OpsTest, AxpyRowsOfF16) {
  for (const int64_t n : kSizes)
    for (const int64_t rows : {1, 5, 16}) {
      const int64_t stride = n + 3;
      const auto xf = random_vec(rows * stride, 17);
      std::vector<uint16_t> x(xf.size());
      std::vector<float> widened(xf.size());
      for (size_t i = 0; i < x.size(); ++i) {
        x[i] = fp32_to_fp16(xf[i]);
        widened[i] = fp16_to_fp32(x[i]);
      }
      check_axpy_rows(x, widened, rows, stride, n, [](auto... args) { axpy_rows_f16(args...); });
    }
}

// Gemma's GeGLU (tanh GELU) and soft-capping against tanh in double: within
// 1e-6 of the result's scale, also for large inputs (tanh saturating) and
// in every lane of a tail.
TEST_P(OpsTest, GegluAndSoftcap) {
  for (const int64_t n : kSizes) {
    const auto x = random_vec(n, 21, 4.0f), up = random_vec(n, 22);
    auto gate = x;
    geglu(gate.data(), up.data(), n);
    auto capped = random_vec(n, 23, 40.0f);
    const auto raw = capped;
    softcap(capped.data(), n, 30.0f);
    for (int64_t i = 0; i < n; ++i) {
      const double v = x[size_t(i)], u = up[size_t(i)];
      const double gelu = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      ASSERT_NEAR(gate[size_t(i)], gelu * u, 1e-6 * (1.0 + std::fabs(v)) * std::fabs(u) + 1e-7) << n << " at " << i;
      ASSERT_NEAR(capped[size_t(i)], 30.0 * std::tanh(double(raw[size_t(i)]) / 30.0), 30.0 * 1e-6) << n << " at " << i;
    }
  }
}

TEST_P(OpsTest, RmsNorm) {
  for (const int64_t n : kSizes) {
    const auto x = random_vec(n, 5, 3.0f), w = random_vec(n, 6);
    double ss = 0;
    for (float v : x) ss += double(v) * v;
    const double scale = 1.0 / std::sqrt(ss / double(n) + 1e-5);
    std::vector<float> out(x.size()), plain(x.size()), inplace = x;
    rmsnorm(out.data(), x.data(), w.data(), n, 1e-5f);
    rmsnorm(plain.data(), x.data(), nullptr, n, 1e-5f);
    rmsnorm(inplace.data(), inplace.data(), w.data(), n, 1e-5f);  // the model normalises in place
    for (size_t i = 0; i < size_t(n); ++i) {
      const double ref = x[i] * scale;
      EXPECT_NEAR(out[i], ref * w[i], kRel * std::fabs(ref * w[i]) + 1e-30) << n;
      EXPECT_NEAR(plain[i], ref, kRel * std::fabs(ref)) << n;
      EXPECT_EQ(inplace[i], out[i]) << n;
    }
  }
}

TEST_P(OpsTest, Softmax) {
  for (const int64_t n : kSizes) {
    auto x = random_vec(n, 7, 4.0f);
    if (n > 3) x[2] = 1000.0f;  // would overflow exp() without the max shift
    const auto x0 = x;
    softmax(x.data(), n);
    const double max = *std::max_element(x0.begin(), x0.end());
    double sum = 0;
    for (float v : x0) sum += std::exp(double(v) - max);
    double total = 0;
    for (size_t i = 0; i < size_t(n); ++i) {
      const double ref = std::exp(double(x0[i]) - max) / sum;
      EXPECT_NEAR(x[i], ref, kRel * ref + 1e-38) << n << " " << i;
      total += x[i];
    }
    EXPECT_NEAR(total, 1.0, 1e-5) << n;
  }
}

TEST_P(OpsTest, SwiGLU) {
  for (const int64_t n : kSizes) {
    auto g = random_vec(n, 8, 5.0f);
    const auto up = random_vec(n, 9), g0 = g;
    swiglu(g.data(), up.data(), n);
    for (size_t i = 0; i < size_t(n); ++i) {
      const double ref = double(g0[i]) / (1.0 + std::exp(-double(g0[i]))) * up[i];
      EXPECT_NEAR(g[i], ref, kRel * std::fabs(ref) + 1e-30) << n << " " << g0[i];
    }
  }
  float extreme[4] = {-200.0f, 200.0f, 0.0f, -90.0f};
  const float ones[4] = {1, 1, 1, 1};
  swiglu(extreme, ones, 4);
  EXPECT_NEAR(extreme[0], 0.0f, 1e-30f);
  EXPECT_EQ(extreme[1], 200.0f);
  EXPECT_EQ(extreme[2], 0.0f);
  EXPECT_NEAR(extreme[3], 0.0f, 1e-30f);
}

// The rotation with the portable loop's roundings, bit for bit on every path.
TEST_P(OpsTest, RopeRotate) {
  for (const bool interleaved : {true, false}) {
    for (const int64_t half : {1, 3, 4, 8, 13, 32}) {
      const auto v0 = random_vec(2 * half, 11), cos = random_vec(half, 12), sin = random_vec(half, 13);
      auto v = v0;
      rope_rotate(v.data(), cos.data(), sin.data(), half, interleaved);
      for (int64_t i = 0; i < half; ++i) {
        const size_t a = size_t(interleaved ? 2 * i : i), b = size_t(interleaved ? 2 * i + 1 : i + half);
        const float c = cos[size_t(i)], s = sin[size_t(i)];
        const float x0 = v0[a], x1 = v0[b];
        const float pc = x0 * c, ps = x1 * s, qs = x0 * s, qc = x1 * c;  // rounded one by one
        EXPECT_EQ(v[a], pc - ps) << interleaved << " " << half << " " << i;
        EXPECT_EQ(v[b], qs + qc) << interleaved << " " << half << " " << i;
      }
    }
  }
}

TEST_P(OpsTest, Argmax) {
  for (const int64_t n : kSizes) {
    auto x = random_vec(n, 10);
    const int64_t top = std::max_element(x.begin(), x.end()) - x.begin();
    EXPECT_EQ(argmax(x.data(), n), top) << n;
    // Ties go to the lowest index, wherever the copies fall in the vectors.
    const int64_t first = n / 2;
    x[size_t(n - 1)] = x[size_t(first)] = x[size_t(top)] + 1.0f;
    EXPECT_EQ(argmax(x.data(), n), first) << n;
    // NaN and -inf are never chosen, even before the maximum.
    if (first >= 2) {
      x[0] = NAN;
      x[1] = -INFINITY;
      EXPECT_EQ(argmax(x.data(), n), first) << n;
    }
  }
  const float none[3] = {-INFINITY, NAN, -INFINITY};
  EXPECT_EQ(argmax(none, 3), -1);
  EXPECT_EQ(argmax(none, 0), -1);
  const float nan_first[9] = {NAN, -5, -4, -3, -2, -1, -7, -8, -9};
  EXPECT_EQ(argmax(nan_first, 9), 5);
  const float zeros[9] = {-1, -0.0f, 0.0f, -2, -3, -4, -5, -6, 0.0f};
  EXPECT_EQ(argmax(zeros, 9), 1);
  const float inf_last[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, INFINITY};
  EXPECT_EQ(argmax(inf_last, 10), 9);
}

TEST_P(OpsTest, MaxOfAndSum) {
  for (const int64_t n : kSizes) {
    auto x = random_vec(n, 14, 3.0f);
    EXPECT_EQ(max_of(x.data(), n), *std::max_element(x.begin(), x.end())) << n;
    double ref = 0;
    for (float v : x) ref += std::fabs(v);
    std::vector<float> a(x.size());
    std::transform(x.begin(), x.end(), a.begin(), [](float v) { return std::fabs(v); });
    EXPECT_NEAR(sum(a.data(), n), ref, 1e-6 * ref) << n;
    // NaN is skipped wherever it falls; -inf counts as a value.
    x[size_t(n - 1)] = NAN;
    if (n > 1) {
      EXPECT_EQ(max_of(x.data(), n), *std::max_element(x.begin(), x.end() - 1)) << n;
    }
  }
  const float none[3] = {-INFINITY, NAN, -INFINITY};
  EXPECT_EQ(max_of(none, 3), -INFINITY);
  EXPECT_EQ(max_of(none, 0), -INFINITY);
  EXPECT_EQ(sum(none, 0), 0.0f);
}

// exp((x - shift) / T) within the softmax's tolerance; -inf and NaN weigh 0.
TEST_P(OpsTest, ExpWeights) {
  for (const int64_t n : kSizes) {
    for (const float temperature : {0.3f, 1.0f, 1.7f}) {
      auto x = random_vec(n, 15, 4.0f);
      if (n > 1) x[0] = -INFINITY;  // the shift (the largest x) is finite when sampling
      if (n > 2) x[2] = NAN;
      const float shift = max_of(x.data(), n);
      std::vector<float> w(x.size(), -1.0f);
      exp_weights(x.data(), shift, temperature, w.data(), n);
      for (size_t i = 0; i < size_t(n); ++i) {
        const double ref = std::isnan(x[i]) ? 0.0 : std::exp((double(x[i]) - shift) / temperature);
        EXPECT_NEAR(w[i], ref, kRel * ref + 1e-38) << n << " " << i << " " << x[i];
      }
      if (n > 1) {
        EXPECT_EQ(w[0], 0.0f);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, OpsTest, ::testing::ValuesIn(paths()),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace parley
