#pragma once
// The acceptance rule of speculative sampling with a draft model whose
// distribution is known (Leviathan et al. 2023; Chen et al. 2023): a draft x
// drawn from the draft's q is kept with probability min(1, p(x) / q(x)),
// where p is the target's distribution after the same sampling
// transformations; otherwise the token is drawn from normalise(max(0, p - q)).
// Whatever q is, the token that comes out follows p; the closer q is to p,
// the more often x is kept (sum over x of min(p(x), q(x)) on average).
#include <cstdint>
#include <random>

namespace parley {

// 53 random bits scaled into [0, 1), the same on every platform (as the Sampler's).
double uniform01(std::mt19937_64& rng);
// The index i where the running sum of w[0..n) first exceeds u * sum(w)
// (weights need not be normalised); the last positive one when rounding
// puts the target past the end.
int32_t draw_index(const float* w, int32_t n, double u);
// The token to emit at a drafted position: x when kept, else a draw from the
// residual distribution. Equal to x exactly when x was kept.
int32_t accept_or_resample(const float* p, const float* q, int32_t n, int32_t x, std::mt19937_64& rng);

}  // namespace parley
