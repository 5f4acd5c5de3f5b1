#include "model/rope_scaling.h"

#include <algorithm>
#include <cmath>

#include "gguf/gguf.h"
#include "util/error.h"

namespace parley {
namespace {

// YaRN's ramp over the pair index i: 1 (pure extrapolation) for the fast
// dimensions below `low`, 0 (pure interpolation) above `high`.
double yarn_ramp(double i, double low, double high) {
  const double y = (i - low) / std::max(0.001, high - low);
  return 1.0 - std::clamp(y, 0.0, 1.0);
}

// The pair index whose wavelength makes `rotations` turns over the original context.
double yarn_dim(const ModelConfig& c, double rotations) {
  return c.rope_dim * std::log(double(c.rope_orig_context) / (rotations * 2.0 * M_PI)) /
         (2.0 * std::log(double(c.rope_base)));
}

}  // namespace

void read_rope_scaling(const gguf::File& f, ModelConfig& c) {
  const std::string a = c.arch + ".";
  const std::string type = f.get_string(a + "rope.scaling.type", "none");
  const double factor = f.get_float(a + "rope.scaling.factor", 1.0);
  // As the reference does: the training context when the key is absent.
  c.rope_orig_context =
      int32_t(std::min<uint64_t>(f.get_uint(a + "rope.scaling.original_context_length", uint64_t(c.context_length)),
                                 uint64_t(1) << 30));
  c.rope_attn_factor = float(f.get_float(a + "rope.scaling.attn_factor", 1.0));
  if (type == "linear") {
    c.rope_scale = float(factor);
  } else if (type == "yarn") {
    if (!(factor >= 1.0) || c.rope_orig_context <= 0)
      throw Error(f.path() + ": yarn scaling needs " + a + "rope.scaling.factor >= 1 and a positive " + a +
                  "rope.scaling.original_context_length");
    c.yarn_factor = float(factor);
    c.yarn_beta_fast = float(f.get_float(a + "rope.scaling.yarn_beta_fast", 32.0));
    c.yarn_beta_slow = float(f.get_float(a + "rope.scaling.yarn_beta_slow", 1.0));
  } else if (type != "none") {
    throw Error(f.path() + ": " + a + "rope.scaling.type '" + type +
                "' is not supported (expected none, linear or yarn; Llama 3 scaling comes as rope_freqs.weight)");
  }
}

RopeFrequencies rope_frequencies(const ModelConfig& c, const float* factors) {
  const int32_t half = c.rope_dim / 2;
  RopeFrequencies r;
  r.inv_freq.resize(size_t(half));
  r.mscale = c.rope_attn_factor;
  for (int32_t i = 0; i < half; ++i) {
    r.inv_freq[size_t(i)] = std::pow(double(c.rope_base), -2.0 * i / c.rope_dim);
    if (factors) r.inv_freq[size_t(i)] /= double(factors[i]);
  }
  if (c.yarn_factor > 0.0f) {
    // Interpolate the slow dimensions by the factor, keep the fast ones, ramp
    // in between; the attention gets sharper by 1 + 0.1 ln(factor).
    const double low = std::max(0.0, std::floor(yarn_dim(c, c.yarn_beta_fast)));
    const double high = std::min(double(c.rope_dim - 1), std::ceil(yarn_dim(c, c.yarn_beta_slow)));
    for (int32_t i = 0; i < half; ++i) {
      const double ramp = yarn_ramp(i, low, high);
      r.inv_freq[size_t(i)] *= (1.0 - ramp) / c.yarn_factor + ramp;
    }
    r.mscale *= 1.0 + 0.1 * std::log(double(c.yarn_factor));
  }
  return r;
}

const float* longrope_factors(const ModelConfig& c, const float* long_factors, const float* short_factors,
                              int32_t context) {
  if (long_factors && context > c.rope_orig_context) return long_factors;
  return short_factors;
}

}  // namespace parley
