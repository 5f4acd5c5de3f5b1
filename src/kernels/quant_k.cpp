// Reference conversions for the K types (256-element super-blocks).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/decode.h"
#include "util/fp16.h"

namespace parley {
namespace {

int clamp_round(float v, int lo, int hi) { return std::clamp(int(std::round(v)), lo, hi); }

// Q4_K / Q5_K quants: chunk c of 64 takes low nibbles of qs[32c..] for its
// first 32 elements and high nibbles for the next 32; Q5_K adds bit (2c or
// 2c+1) of qh[l] as bit 4.
void unpack_q45(const uint8_t* qs, const uint8_t* qh, int8_t q[256]) {
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      int lo = qs[32 * c + l] & 15, hi = qs[32 * c + l] >> 4;
      if (qh) {
        lo |= (qh[l] >> (2 * c) & 1) << 4;
        hi |= (qh[l] >> (2 * c + 1) & 1) << 4;
      }
      q[64 * c + l] = int8_t(lo);
      q[64 * c + 32 + l] = int8_t(hi);
    }
}

void pack_q45(const uint8_t q[256], uint8_t* qs, uint8_t* qh) {
  if (qh) std::memset(qh, 0, 32);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      const uint8_t lo = q[64 * c + l], hi = q[64 * c + 32 + l];
      qs[32 * c + l] = uint8_t((lo & 15) | (hi & 15) << 4);
      if (qh) qh[l] = uint8_t(qh[l] | (lo >> 4) << (2 * c) | (hi >> 4) << (2 * c + 1));
    }
}

// Inverse of unpack_k_scales.
void pack_k_scales(const uint8_t sc[8], const uint8_t m[8], uint8_t* packed) {
  for (int j = 0; j < 4; ++j) {
    packed[j] = uint8_t(sc[j] | (sc[j + 4] >> 4) << 6);
    packed[j + 4] = uint8_t(m[j] | (m[j + 4] >> 4) << 6);
    packed[j + 8] = uint8_t((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
  }
}

void fill_k_header(uint16_t d, uint16_t dmin, const uint8_t* scales, BlockK& out) {
  uint64_t sc, m;
  unpack_k_scales(scales, sc, m);
  std::memcpy(out.sc, &sc, 8);  // 6-bit values: the same as int8
  std::memcpy(out.m, &m, 8);
  out.sub = 32;
  out.d = fp16_to_fp32(d);
  out.dmin = fp16_to_fp32(dmin);
}

void decode_q4_k(const uint8_t* p, BlockK& out) {
  const auto& b = *reinterpret_cast<const BlockQ4_K*>(p);
  fill_k_header(b.d, b.dmin, b.scales, out);
  unpack_q45(b.qs, nullptr, out.q);
}

void decode_q5_k(const uint8_t* p, BlockK& out) {
  const auto& b = *reinterpret_cast<const BlockQ5_K*>(p);
  fill_k_header(b.d, b.dmin, b.scales, out);
  unpack_q45(b.qs, b.qh, out.q);
}

void decode_q6_k(const uint8_t* p, BlockK& out) {
  const auto& b = *reinterpret_cast<const BlockQ6_K*>(p);
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = b.ql + 64 * h;
    const uint8_t* qh = b.qh + 32 * h;
    int8_t* q = out.q + 128 * h;
    for (int l = 0; l < 32; ++l) {
      q[l] = int8_t(((ql[l] & 15) | (qh[l] & 3) << 4) - 32);
      q[l + 32] = int8_t(((ql[l + 32] & 15) | (qh[l] >> 2 & 3) << 4) - 32);
      q[l + 64] = int8_t(((ql[l] >> 4) | (qh[l] >> 4 & 3) << 4) - 32);
      q[l + 96] = int8_t(((ql[l + 32] >> 4) | (qh[l] >> 6 & 3) << 4) - 32);
    }
  }
  std::memcpy(out.sc, b.scales, 16);
  std::memset(out.m, 0, 16);
  out.sub = 16;
  out.d = fp16_to_fp32(b.d);
  out.dmin = 0.0f;
}

// Q4_K / Q5_K: each 32-element sub-block spans [-min, -min + (levels-1) *
// scale] with min >= 0 (the format subtracts mins); scales and mins are then
// quantized to 6 bits against the super-block's largest.
void quantize_q45_k(const float* x, int levels, uint16_t& d, uint16_t& dmin, uint8_t* scales,
                    uint8_t q[256]) {
  float scale[8], min[8];
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    const float lo = std::min(0.0f, *std::min_element(xs, xs + 32));
    const float hi = *std::max_element(xs, xs + 32);
    scale[j] = (hi - lo) / float(levels - 1);
    min[j] = -lo;
  }
  d = fp32_to_fp16(*std::max_element(scale, scale + 8) / 63.0f);
  dmin = fp32_to_fp16(*std::max_element(min, min + 8) / 63.0f);
  const float df = fp16_to_fp32(d), dminf = fp16_to_fp32(dmin);
  uint8_t sc[8], m[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = uint8_t(df > 0.0f ? clamp_round(scale[j] / df, 0, 63) : 0);
    m[j] = uint8_t(dminf > 0.0f ? clamp_round(min[j] / dminf, 0, 63) : 0);
    const float step = df * float(sc[j]), offset = dminf * float(m[j]);
    for (int i = 0; i < 32; ++i)
      q[32 * j + i] =
          uint8_t(step > 0.0f ? clamp_round((x[32 * j + i] + offset) / step, 0, levels - 1) : 0);
  }
  pack_k_scales(sc, m, scales);
}

void quantize_q4_k(const float* x, uint8_t* p) {
  auto& b = *reinterpret_cast<BlockQ4_K*>(p);
  uint8_t q[256];
  quantize_q45_k(x, 16, b.d, b.dmin, b.scales, q);
  pack_q45(q, b.qs, nullptr);
}

void quantize_q5_k(const float* x, uint8_t* p) {
  auto& b = *reinterpret_cast<BlockQ5_K*>(p);
  uint8_t q[256];
  quantize_q45_k(x, 32, b.d, b.dmin, b.scales, q);
  pack_q45(q, b.qs, b.qh);
}

// Q6_K: symmetric 16-element sub-blocks (the largest magnitude maps to -32),
// int8 scales against the super-block's largest.
void quantize_q6_k(const float* x, uint8_t* p) {
  auto& b = *reinterpret_cast<BlockQ6_K*>(p);
  float scale[16], max_scale = 0.0f;
  for (int j = 0; j < 16; ++j) {
    float max = 0.0f;
    for (int i = 0; i < 16; ++i)
      if (std::fabs(x[16 * j + i]) > std::fabs(max)) max = x[16 * j + i];
    scale[j] = max / -32.0f;
    max_scale = std::max(max_scale, std::fabs(scale[j]));
  }
  b.d = fp32_to_fp16(max_scale / 127.0f);
  const float df = fp16_to_fp32(b.d);
  uint8_t q[256];
  for (int j = 0; j < 16; ++j) {
    b.scales[j] = int8_t(df > 0.0f ? clamp_round(scale[j] / df, -127, 127) : 0);
    const float step = df * float(b.scales[j]);
    for (int i = 0; i < 16; ++i)
      q[16 * j + i] =
          uint8_t(step != 0.0f ? clamp_round(x[16 * j + i] / step, -32, 31) + 32 : 32);
  }
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const uint8_t* qq = q + 128 * h + l;
      b.ql[64 * h + l] = uint8_t((qq[0] & 15) | (qq[64] & 15) << 4);
      b.ql[64 * h + 32 + l] = uint8_t((qq[32] & 15) | (qq[96] & 15) << 4);
      b.qh[32 * h + l] =
          uint8_t(qq[0] >> 4 | (qq[32] >> 4) << 2 | (qq[64] >> 4) << 4 | (qq[96] >> 4) << 6);
    }
}

}  // namespace

BlockKDecoder block_k_decoder(DType type) {
  switch (type) {
    case DType::Q4_K: return decode_q4_k;
    case DType::Q5_K: return decode_q5_k;
    case DType::Q6_K: return decode_q6_k;
    case DType::Q2_K: return decode_q2_k;
    case DType::Q3_K: return decode_q3_k;
    case DType::IQ4_XS: return decode_iq4_xs;
    default: return nullptr;
  }
}

void dequantize_row_k(DType type, const uint8_t* src, float* dst, int64_t n) {
  const auto decode = block_k_decoder(type);
  const int bytes = traits(type).block_bytes;
  BlockK b;
  for (int64_t i = 0; i < n / 256; ++i, dst += 256) {
    decode(src + i * bytes, b);
    for (int e = 0; e < 256; ++e) {
      const int j = e / b.sub;
      dst[e] = b.d * float(b.sc[j]) * float(b.q[e]) - b.dmin * float(b.m[j]);
    }
  }
}

void quantize_row_k(DType type, const float* src, uint8_t* dst, int64_t n) {
  void (*quantize)(const float*, uint8_t*) = nullptr;
  switch (type) {
    case DType::Q4_K: quantize = quantize_q4_k; break;
    case DType::Q5_K: quantize = quantize_q5_k; break;
    case DType::Q6_K: quantize = quantize_q6_k; break;
    case DType::Q2_K: quantize = quantize_q2_k; break;
    case DType::Q3_K: quantize = quantize_q3_k; break;
    case DType::IQ4_XS: quantize = quantize_iq4_xs; break;
    default: return;
  }
  const int bytes = traits(type).block_bytes;
  for (int64_t i = 0; i < n / 256; ++i) quantize(src + i * 256, dst + i * bytes);
}

}  // namespace parley
