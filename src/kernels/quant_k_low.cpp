// Reference conversions for Q2_K and Q3_K (16-element sub-blocks of 2- and
// 3-bit quants); their scale searches are in quant_fit.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/decode.h"
#include "kernels/quant_fit.h"
#include "util/fp16.h"

namespace parley {
namespace {

int round_clamp(float v, int lo, int hi) { return std::clamp(int(std::lround(v)), lo, hi); }

// The 2-bit planes shared by Q2_K and Q3_K: element 128h + 32k + l is bits
// 2k, 2k+1 of qs[32h + l].
void unpack_2bit(const uint8_t* qs, int8_t q[256]) {
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) q[128 * h + 32 * k + l] = int8_t(qs[32 * h + l] >> (2 * k) & 3);
}

void pack_2bit(const uint8_t q[256], uint8_t* qs) {
  std::memset(qs, 0, 64);
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) qs[32 * h + l] = uint8_t(qs[32 * h + l] | (q[128 * h + 32 * k + l] & 3) << (2 * k));
}

}  // namespace

void decode_q2_k(const uint8_t* p, BlockK& out) {
  const auto& b = *reinterpret_cast<const BlockQ2_K*>(p);
  unpack_2bit(b.qs, out.q);
  for (int j = 0; j < 16; ++j) {
    out.sc[j] = int8_t(b.scales[j] & 15);
    out.m[j] = uint8_t(b.scales[j] >> 4);
  }
  out.sub = 16;
  out.d = fp16_to_fp32(b.d);
  out.dmin = fp16_to_fp32(b.dmin);
}

void decode_q3_k(const uint8_t* p, BlockK& out) {
  const auto& b = *reinterpret_cast<const BlockQ3_K*>(p);
  unpack_2bit(b.qs, out.q);
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) {
        int8_t& q = out.q[128 * h + 32 * k + l];
        q = int8_t(q + (b.hmask[l] >> (4 * h + k) & 1) * 4 - 4);
      }
  unpack_q3_k_scales(b.scales, out.sc);
  std::memset(out.m, 0, 16);
  out.sub = 16;
  out.d = fp16_to_fp32(b.d);
  out.dmin = 0.0f;
}

// Each sub-block's scale and min by fit_affine, then both sets quantized to
// 4 bits against their largest and the quants re-rounded to the stored grid.
void quantize_q2_k(const float* x, uint8_t* p) {
  auto& b = *reinterpret_cast<BlockQ2_K*>(p);
  float scale[16], min[16], w[16];
  for (int j = 0; j < 16; ++j) {
    fit_weights(x + 16 * j, 16, w);
    fit_affine(x + 16 * j, w, 16, 3, scale[j], min[j]);
  }
  const float max_scale = *std::max_element(scale, scale + 16), max_min = *std::max_element(min, min + 16);
  b.d = fp32_to_fp16(max_scale / 15.0f);
  b.dmin = fp32_to_fp16(max_min / 15.0f);
  const float d = fp16_to_fp32(b.d), dmin = fp16_to_fp32(b.dmin);
  uint8_t q[256];
  for (int j = 0; j < 16; ++j) {
    const int sc = d > 0.0f ? round_clamp(scale[j] / d, 0, 15) : 0;
    const int m = dmin > 0.0f ? round_clamp(min[j] / dmin, 0, 15) : 0;
    b.scales[j] = uint8_t(sc | m << 4);
    const float step = d * float(sc), offset = dmin * float(m);
    for (int i = 0; i < 16; ++i)
      q[16 * j + i] = uint8_t(step > 0.0f ? round_clamp((x[16 * j + i] + offset) / step, 0, 3) : 0);
  }
  pack_2bit(q, b.qs);
}

// Each sub-block's signed scale by fit_levels over the quants -4..3, the
// scales to 6 bits (the largest magnitude maps to -32), then the quants.
void quantize_q3_k(const float* x, uint8_t* p) {
  static const int8_t kValues[8] = {-4, -3, -2, -1, 0, 1, 2, 3};
  static const Levels levels(kValues, 8);
  auto& b = *reinterpret_cast<BlockQ3_K*>(p);
  float scale[16], w[16], max = 0.0f;
  for (int j = 0; j < 16; ++j) {
    fit_weights(x + 16 * j, 16, w);
    scale[j] = fit_levels(x + 16 * j, w, 16, levels);
    if (std::fabs(scale[j]) > std::fabs(max)) max = scale[j];
  }
  b.d = fp32_to_fp16(max / -32.0f);
  const float d = fp16_to_fp32(b.d);
  uint8_t q[256];
  std::memset(b.scales, 0, 12);
  std::memset(b.hmask, 0, 32);
  for (int j = 0; j < 16; ++j) {
    const int sc = d != 0.0f ? round_clamp(scale[j] / d, -32, 31) : 0;
    const int u = sc + 32;  // stored biased (see unpack_q3_k_scales)
    b.scales[j % 8] = uint8_t(b.scales[j % 8] | (u & 15) << (4 * (j / 8)));
    b.scales[8 + j % 4] = uint8_t(b.scales[8 + j % 4] | (u >> 4) << (2 * (j / 4)));
    const float step = d * float(sc);
    for (int i = 0; i < 16; ++i)
      q[16 * j + i] = uint8_t(step != 0.0f ? round_clamp(x[16 * j + i] / step, -4, 3) + 4 : 4);
  }
  for (int e = 0; e < 256; ++e)
    if (q[e] & 4) b.hmask[e % 32] = uint8_t(b.hmask[e % 32] | 1 << (e / 32));
  pack_2bit(q, b.qs);
}

}  // namespace parley
