#pragma once
// Scale searches of the low-bit quantizers (Q2_K, Q3_K, IQ4_NL, IQ4_XS): a
// group of values is fitted by weighted least squares, trying several
// starting scales and keeping the one of least weighted squared error.
#include <cstdint>

namespace parley {

// Weights of the fits: w_i = mean(x^2) + x_i^2. Large values count more, as
// their errors move the dot products most; the mean keeps small ones in play.
void fit_weights(const float* x, int n, float* w);

// An ascending set of quant values (at most 16 int8 values, at least 1 apart)
// and the nearest one to a value.
class Levels {
 public:
  Levels(const int8_t* values, int count);
  int count() const { return count_; }
  float value(int i) const { return values_[i]; }
  int nearest(float v) const;  // index of the level nearest v

 private:
  float values_[16] = {};
  float mids_[16] = {};  // mids_[i]: halfway between levels i and i + 1
  // below_[b + 128]: how many mids are <= b. A unit interval holds at most
  // one mid, so nearest() needs one lookup and one comparison.
  uint8_t below_[256] = {};
  int count_ = 0;
};

// The scale d (of either sign) minimising sum w_i (x_i - d * level(q_i))^2
// with each q_i the nearest level to x_i / d; 0 for an all-zero group.
float fit_levels(const float* x, const float* w, int n, const Levels& levels);

// x_i ~ scale * q_i - min with q_i in [0, nmax], scale >= 0, min >= 0 (the
// K formats subtract their mins), by the same search.
void fit_affine(const float* x, const float* w, int n, int nmax, float& scale, float& min);

}  // namespace parley
