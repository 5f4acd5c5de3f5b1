#include "engine/draft_acceptance.h"

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

int32_t accept_or_resample(const float* p, const float* q, int32_t n, int32_t x, std::mt19937_64& rng) {
  // u < p/q, written without the division (q(x) > 0: x was drawn from q).
  if (uniform01(rng) * double(q[x]) < double(p[x])) return x;
  // Rejected, so p(x) < q(x) and the residual gives x no weight. Its total is
  // the rejection's probability; rounding can leave it empty only when p and
  // q are equal in all but the last bits, and then p itself is the answer.
  const double u = uniform01(rng);
  double total = 0.0;
  for (int32_t i = 0; i < n; ++i) total += std::max(0.0, double(p[i]) - double(q[i]));
  if (!(total > 0.0)) return draw_index(p, n, u);
  const double target = u * total;
  double cumulative = 0.0;
  int32_t last = -1;
  for (int32_t i = 0; i < n; ++i) {
    const double r = double(p[i]) - double(q[i]);
    if (!(r > 0.0)) continue;
    cumulative += r;
    last = i;
    if (target < cumulative) return i;
  }
  return last;
}

}  // namespace parley
