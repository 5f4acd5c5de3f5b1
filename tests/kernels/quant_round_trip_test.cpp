// quantize_row -> dequantize_row stays within each format's error bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/quant.h"

namespace parley {
namespace {

struct Bound {
  DType type;
  double max_rel;  // max |error| per block / the block's max |x|
  double rms_rel;  // RMS error / RMS of x
};

// Block formats: a 2^b-level quantizer over the block's range errs by at most
// half a step, plus clamping at the edge (symmetric types: up to one step) and
// the f16 rounding of scales. The K types also round their sub-block scales
// and mins to 6 bits (Q6_K: int8) against the largest of the super-block.
const Bound kBounds[] = {
    {DType::Q8_0, 0.0045, 0.0075}, {DType::Q4_0, 0.126, 0.115}, {DType::Q4_1, 0.068, 0.085},
    {DType::Q5_0, 0.0635, 0.06},   {DType::Q5_1, 0.034, 0.042}, {DType::Q4_K, 0.075, 0.088},
    {DType::Q5_K, 0.037, 0.043},   {DType::Q6_K, 0.02, 0.024},
    // The low-bit types fit their scales by weighted least squares
    // (quant_fit.cpp), which may clip a block's largest value to fit the
    // rest better. Measured 0.246 / 0.241 (Q2_K), 0.124 / 0.147 (Q3_K), 0.088
    // / 0.079 (IQ4_NL: Q4_0's size at two thirds of its error), 0.082 / 0.080.
    {DType::Q2_K, 0.27, 0.265},    {DType::Q3_K, 0.14, 0.16},
    {DType::IQ4_NL, 0.097, 0.087}, {DType::IQ4_XS, 0.09, 0.088},
};

// Gaussian rows with a few outliers, and a block of all-positive values (a
// non-zero min), as weights tend to look.
std::vector<float> test_row(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng);
  for (int i = 0; i < n; i += 97) x[size_t(i)] *= 6.0f;
  for (int i = 512; i < 768 && i < n; ++i) x[size_t(i)] = 3.0f + std::fabs(x[size_t(i)]);
  return x;
}

std::vector<float> round_trip(DType t, const std::vector<float>& x) {
  const int n = int(x.size());
  std::vector<uint8_t> q(row_bytes(t, uint64_t(n)));
  quantize_row(t, x.data(), q.data(), n);
  std::vector<float> y(static_cast<size_t>(n));
  dequantize_row(t, q.data(), y.data(), n);
  return y;
}

class RoundTrip : public ::testing::TestWithParam<Bound> {};

TEST_P(RoundTrip, WithinBound) {
  const Bound b = GetParam();
  const int block = traits(b.type).block_elems;
  const auto x = test_row(4096, 42);
  const auto y = round_trip(b.type, x);
  double err2 = 0, x2 = 0, worst = 0;
  for (size_t start = 0; start < x.size(); start += size_t(block)) {
    double amax = 0, emax = 0;
    for (size_t i = start; i < start + size_t(block); ++i) {
      amax = std::max(amax, double(std::fabs(x[i])));
      emax = std::max(emax, std::fabs(double(x[i]) - double(y[i])));
      err2 += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
      x2 += double(x[i]) * x[i];
    }
    worst = std::max(worst, emax / amax);
  }
  const double rms = std::sqrt(err2 / x2);
  EXPECT_LE(worst, b.max_rel) << dtype_name(b.type);
  EXPECT_LE(rms, b.rms_rel) << dtype_name(b.type);
  // Quantizing is not a no-op that hides a broken dequantizer.
  EXPECT_GT(rms, b.rms_rel / 20) << dtype_name(b.type);
}

INSTANTIATE_TEST_SUITE_P(Types, RoundTrip, ::testing::ValuesIn(kBounds),
                         [](const auto& info) { return std::string(dtype_name(info.param.type)); });

TEST(RoundTrip, FloatTypes) {
  const auto x = test_row(1024, 7);
  EXPECT_EQ(round_trip(DType::F32, x), x);
  const auto h = round_trip(DType::F16, x);
  const auto b = round_trip(DType::BF16, x);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_LE(std::fabs(h[i] - x[i]), std::fabs(x[i]) * 0x1p-11f) << i;
    EXPECT_LE(std::fabs(b[i] - x[i]), std::fabs(x[i]) * 0x1p-8f) << i;
  }
}

TEST(RoundTrip, ZerosStayZero) {
  const std::vector<float> x(512, 0.0f);
  for (const Bound& b : kBounds) EXPECT_EQ(round_trip(b.type, x), x) << dtype_name(b.type);
}

// Values that sit exactly on a format's grid come back unchanged.
TEST(RoundTrip, GridValuesAreExact) {
  std::vector<float> x(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 15) - 7);  // -7 .. 7
  for (size_t i = 0; i < x.size(); i += 32) x[i] = -8.0f;                // max magnitude, on the grid
  EXPECT_EQ(round_trip(DType::Q4_0, x), x);
  EXPECT_EQ(round_trip(DType::Q5_0, x), x);
  EXPECT_EQ(round_trip(DType::Q8_0, x), round_trip(DType::Q8_0, round_trip(DType::Q8_0, x)));
}

}  // namespace
}  // namespace parley
