#include "kernels/quant_fit.h"

#include <algorithm>
#include <cmath>

namespace parley {
namespace {

// Starting scales are the range's end mapped to a level, stretched by these
// factors (a slightly wider or narrower grid often fits the bulk better).
constexpr float kStretch[] = {0.85f, 0.92f, 1.0f, 1.08f, 1.16f};

}  // namespace

void fit_weights(const float* x, int n, float* w) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += x[i] * x[i];
  const float mean = sum / float(n);
  for (int i = 0; i < n; ++i) w[i] = mean + x[i] * x[i];
}

Levels::Levels(const int8_t* values, int count) : count_(count) {
  for (int i = 0; i < count; ++i) values_[i] = float(values[i]);
  for (int i = 0; i + 1 < count; ++i) mids_[i] = 0.5f * (values_[i] + values_[i + 1]);
  for (int b = -128; b < 128; ++b)
    below_[b + 128] = uint8_t(std::upper_bound(mids_, mids_ + count_ - 1, float(b)) - mids_);
}

int Levels::nearest(float v) const {
  const float c = std::clamp(v, -128.0f, 127.0f);  // NaN-free inputs assumed
  int i = below_[int(std::floor(c)) + 128];
  if (i < count_ - 1 && mids_[i] <= c) ++i;
  return i;
}

float fit_levels(const float* x, const float* w, int n, const Levels& levels) {
  float max = 0.0f;  // the value of largest magnitude
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(max)) max = x[i];
  if (max == 0.0f) return 0.0f;
  float best_d = 0.0f, best_score = -1.0f;
  for (const float end : {levels.value(0), levels.value(levels.count() - 1)})
    for (const float stretch : kStretch) {
      const float id = end * stretch / max;  // 1 / d
      // With the assignment fixed the best d is sum(w x l) / sum(w l^2), and
      // the error falls as sum(w x l)^2 / sum(w l^2) rises.
      float sxl = 0.0f, sll = 0.0f;
      for (int i = 0; i < n; ++i) {
        const float l = levels.value(levels.nearest(x[i] * id));
        sxl += w[i] * x[i] * l;
        sll += w[i] * l * l;
      }
      if (sll > 0.0f && sxl * sxl / sll > best_score) {
        best_score = sxl * sxl / sll;
        best_d = sxl / sll;
      }
    }
  return best_d;
}

void fit_affine(const float* x, const float* w, int n, int nmax, float& scale, float& min) {
  const float lo = std::min(0.0f, *std::min_element(x, x + n));
  const float hi = *std::max_element(x, x + n);
  scale = 0.0f;
  min = -lo;
  if (hi <= lo) return;
  float best_err = INFINITY;
  for (const float stretch : kStretch) {
    const float s0 = (hi - lo) / (float(nmax) * stretch);
    // Assign, then solve the 2x2 normal equations for x ~ s q + o.
    float sw = 0.0f, sq = 0.0f, sqq = 0.0f, sx = 0.0f, sxq = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float q = std::clamp(std::round((x[i] - lo) / s0), 0.0f, float(nmax));
      sw += w[i];
      sq += w[i] * q;
      sqq += w[i] * q * q;
      sx += w[i] * x[i];
      sxq += w[i] * x[i] * q;
    }
    const float det = sw * sqq - sq * sq;
    float s = det > 0.0f ? (sw * sxq - sq * sx) / det : s0;
    float o = det > 0.0f ? (sqq * sx - sq * sxq) / det : lo;
    if (o > 0.0f) {  // the offset must not be positive: refit the scale alone
      o = 0.0f;
      s = sqq > 0.0f ? sxq / sqq : s0;
    }
    if (s <= 0.0f) continue;
    float err = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float q = std::clamp(std::round((x[i] - o) / s), 0.0f, float(nmax));
      const float e = x[i] - (s * q + o);
      err += w[i] * e * e;
    }
    if (err < best_err) {
      best_err = err;
      scale = s;
      min = -o;
    }
  }
}

}  // namespace parley
