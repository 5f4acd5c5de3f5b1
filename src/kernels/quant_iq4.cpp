// Reference conversions for IQ4_NL and IQ4_XS: 4-bit indices into the fixed
// non-linear codebook kIq4Values, with scales searched by quant_fit.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/decode.h"
#include "kernels/quant_fit.h"
#include "util/fp16.h"

namespace parley {
namespace {

const Levels& iq4_levels() {
  static const Levels levels(kIq4Values, 16);
  return levels;
}

void unpack_iq4(const uint8_t* qs, int8_t q[32]) {
  for (int i = 0; i < 16; ++i) {
    q[i] = kIq4Values[qs[i] & 15];
    q[i + 16] = kIq4Values[qs[i] >> 4];
  }
}

// 32 values at `step` per codebook unit as nibbles (zero step: the level
// nearest 0).
void pack_iq4(const float* x, float step, uint8_t* qs) {
  const Levels& levels = iq4_levels();
  const float inv = step != 0.0f ? 1.0f / step : 0.0f;
  for (int i = 0; i < 16; ++i)
    qs[i] = uint8_t(levels.nearest(x[i] * inv) | levels.nearest(x[i + 16] * inv) << 4);
}

}  // namespace

void decode_iq4_nl(const uint8_t* p, Block32& out) {
  const auto& b = *reinterpret_cast<const BlockIQ4_NL*>(p);
  unpack_iq4(b.qs, out.q);
  out.d = fp16_to_fp32(b.d);
  out.m = 0.0f;
}

void decode_iq4_xs(const uint8_t* p, BlockK& out) {
  const auto& b = *reinterpret_cast<const BlockIQ4_XS*>(p);
  for (int j = 0; j < 8; ++j) {
    unpack_iq4(b.qs + 16 * j, out.q + 32 * j);
    out.sc[j] = int8_t(iq4_xs_scale(b, j));
  }
  std::memset(out.sc + 8, 0, 8);
  std::memset(out.m, 0, 16);
  out.sub = 32;
  out.d = fp16_to_fp32(b.d);
  out.dmin = 0.0f;
}

void quantize_iq4_nl(const float* x, uint8_t* p) {
  auto& b = *reinterpret_cast<BlockIQ4_NL*>(p);
  float w[32];
  fit_weights(x, 32, w);
  b.d = fp32_to_fp16(fit_levels(x, w, 32, iq4_levels()));
  pack_iq4(x, fp16_to_fp32(b.d), b.qs);
}

// Each sub-block's scale by fit_levels, the scales to 6 bits (the largest
// magnitude maps to -32), then the indices against the stored scales.
void quantize_iq4_xs(const float* x, uint8_t* p) {
  auto& b = *reinterpret_cast<BlockIQ4_XS*>(p);
  float scale[8], w[32], max = 0.0f;
  for (int j = 0; j < 8; ++j) {
    fit_weights(x + 32 * j, 32, w);
    scale[j] = fit_levels(x + 32 * j, w, 32, iq4_levels());
    if (std::fabs(scale[j]) > std::fabs(max)) max = scale[j];
  }
  b.d = fp32_to_fp16(max / -32.0f);
  const float d = fp16_to_fp32(b.d);
  b.scales_h = 0;
  std::memset(b.scales_l, 0, 4);
  for (int j = 0; j < 8; ++j) {
    const int sc = d != 0.0f ? std::clamp(int(std::lround(scale[j] / d)), -32, 31) : 0;
    const int u = sc + 32;
    b.scales_l[j / 2] = uint8_t(b.scales_l[j / 2] | (u & 15) << (4 * (j % 2)));
    b.scales_h = uint16_t(b.scales_h | (u >> 4) << (2 * j));
    pack_iq4(x + 32 * j, d * float(sc), b.qs + 16 * j);
  }
}

}  // namespace parley
