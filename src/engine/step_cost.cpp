#include "engine/step_cost.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace parley {

// Two standard deviations of the recent errors: were they normal, about 2%
// of steps would still overrun the target.
constexpr double kErrorMargin = 2.0;
// Errors count once the fit has about four steps' weight: before, its
// predictions rest on one or two steps and miss by the fit's own ignorance,
// not by the noise the margin is for.
constexpr double kWarmupWeight = 3.5;

void StepCost::observe(int32_t decodes, int32_t prefill, double seconds) {
  if (xx_[0][0] >= kWarmupWeight) {
    const double e = seconds - predict(decodes, prefill);
    err2_ = forget_ * err2_ + e * e;
    err_weight_ = forget_ * err_weight_ + 1.0;
  }
  const std::array<double, 3> x{1.0, double(decodes), double(prefill)};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) xx_[i][j] = forget_ * xx_[i][j] + x[i] * x[j];
    xt_[i] = forget_ * xt_[i] + x[i] * seconds;
  }
}

std::array<double, 3> StepCost::fit() const {
  constexpr double kRidge = 1e-6;
  // Gaussian elimination with partial pivoting on [xx + ridge I | xt].
  double m[3][4];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) m[i][j] = xx_[i][j] + (i == j ? kRidge : 0.0);
    m[i][3] = xt_[i];
  }
  for (int c = 0; c < 3; ++c) {
    int p = c;
    for (int r = c + 1; r < 3; ++r)
      if (std::abs(m[r][c]) > std::abs(m[p][c])) p = r;
    std::swap(m[c], m[p]);
    for (int r = c + 1; r < 3; ++r) {
      const double f = m[r][c] / m[c][c];
      for (int k = c; k < 4; ++k) m[r][k] -= f * m[c][k];
    }
  }
  std::array<double, 3> theta{};
  for (int r = 2; r >= 0; --r) {
    double s = m[r][3];
    for (int k = r + 1; k < 3; ++k) s -= m[r][k] * theta[size_t(k)];
    theta[size_t(r)] = s / m[r][r];
  }
  return theta;
}

double StepCost::predict(int32_t decodes, int32_t prefill) const {
  const auto [a, bd, bp] = fit();
  return a + bd * decodes + bp * prefill;
}

double StepCost::error() const { return err_weight_ > 0 ? std::sqrt(err2_ / err_weight_) : 0.0; }

int32_t StepCost::prefill_within(double seconds, int32_t decodes, int32_t cap) const {
  if (!known()) return cap;
  const auto [a, bd, bp] = fit();
  const double left = seconds - kErrorMargin * error() - (a + bd * decodes);
  if (left <= 0) return 0;
  if (bp <= 0 || left / bp >= double(cap)) return cap;
  return int32_t(left / bp);
}

}  // namespace parley
