#include "engine/draft_draw.h"

#include <algorithm>

namespace parley {

double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

int32_t draw_index(const float* w, int32_t n, double u) {
  double total = 0.0;
  for (int32_t i = 0; i < n; ++i) total += double(w[i]);
  const double target = u * total;
  double cumulative = 0.0;
  int32_t last = -1;
  for (int32_t i = 0; i < n; ++i) {
    if (!(w[i] > 0.0f)) continue;
    cumulative += double(w[i]);
    last = i;
    if (target < cumulative) return i;
  }
  return last;
}

}  // namespace parley
