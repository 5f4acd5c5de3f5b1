#pragma once
// How a model stretches RoPE past its training context, from GGUF metadata:
// linear position scaling, per-frequency factors (Llama 3's rope_freqs,
// Phi-3's LongRoPE long/short factors) and YaRN. All of them come down to a
// divisor per frequency and a magnitude for the cos/sin tables.
#include <vector>

#include "model/config.h"

namespace parley {
namespace gguf { class File; }

// Reads {arch}.rope.scaling.* into c (type none, linear or yarn; LongRoPE's
// original context and attention factor); throws on other types. Needs
// c.arch and c.context_length.
void read_rope_scaling(const gguf::File& f, ModelConfig& c);

struct RopeFrequencies {
  std::vector<double> inv_freq;  // rope_dim / 2 angles per position
  double mscale = 1.0;           // cos and sin are multiplied by this
};

// factors: optional per-frequency divisors (rope_dim / 2 of them).
RopeFrequencies rope_frequencies(const ModelConfig& c, const float* factors);

// LongRoPE: the long factors when the context in use exceeds the original
// training context, else the short ones; nullptr when the file has neither.
const float* longrope_factors(const ModelConfig& c, const float* long_factors, const float* short_factors,
                              int32_t context);

}  // namespace parley
