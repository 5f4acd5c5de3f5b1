#pragma once
// How a draft model's sampled draft is drawn: with the uniform the target's
// sampler will use at that position (the next values of the sequence's own
// generator, one per token, as Sampler::draw takes them), by the same inverse
// distribution function over the token order. Verification then draws the
// target's token exactly as without speculation and keeps the draft when the
// two are equal: the output is the plain decoding's, token for token, also
// for a sampled request with a seed, and a draft whose distribution q is
// close to the target's p lands on the same token for most uniforms.
#include <cstdint>
#include <random>

namespace parley {

// 53 random bits scaled into [0, 1), the same on every platform (as the Sampler's).
double uniform01(std::mt19937_64& rng);
// The index i where the running sum of w[0..n) first exceeds u * sum(w)
// (weights need not be normalised); the last positive one when rounding
// puts the target past the end.
int32_t draw_index(const float* w, int32_t n, double u);

}  // namespace parley
