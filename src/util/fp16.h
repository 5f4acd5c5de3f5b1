#pragma once
// IEEE half and bfloat16 <-> float conversions (portable bit manipulation;
// SIMD kernels use F16C / AVX512-BF16 instructions instead).
#include <cstdint>
#include <cstring>

namespace parley {

inline float fp32_from_bits(uint32_t w) { float f; std::memcpy(&f, &w, 4); return f; }
inline uint32_t fp32_to_bits(float f) { uint32_t w; std::memcpy(&w, &f, 4); return w; }

inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    if (mant == 0) return fp32_from_bits(sign);
    // Subnormal: normalise the mantissa.
    exp = 127 - 15 + 1;
    while ((mant & 0x400) == 0) { mant <<= 1; --exp; }
    mant &= 0x3ff;
    return fp32_from_bits(sign | (exp << 23) | (mant << 13));
  }
  if (exp == 0x1f) return fp32_from_bits(sign | 0x7f800000 | (mant << 13));
  return fp32_from_bits(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

// Round to nearest even, with overflow to infinity and subnormal results.
inline uint16_t fp32_to_fp16(float f) {
  const uint32_t x = fp32_to_bits(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7fffffff;
  if (ax >= 0x7f800000) return uint16_t(sign | 0x7c00 | (ax > 0x7f800000 ? 0x200 : 0));
  if (ax >= 0x477ff000) return uint16_t(sign | 0x7c00);  // rounds past 65504
  if (ax < 0x38800000) {                                  // subnormal or zero in half
    const float v = fp32_from_bits(ax) * 16777216.0f;       // scale by 2^24
    const uint32_t m = uint32_t(v + 0.5f);
    uint32_t r = m;
    if ((v + 0.5f) == float(m) && (m & 1)) r = m - 1;       // ties to even
    return uint16_t(sign | r);
  }
  const uint32_t mant_odd = (ax >> 13) & 1;
  const uint32_t rounded = ax + 0xfff + mant_odd;
  return uint16_t(sign | ((rounded - 0x38000000) >> 13));
}

inline float bf16_to_fp32(uint16_t h) { return fp32_from_bits(uint32_t(h) << 16); }

inline uint16_t fp32_to_bf16(float f) {
  const uint32_t x = fp32_to_bits(f);
  if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

}  // namespace parley
