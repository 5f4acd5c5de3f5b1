#pragma once
// Quantized blocks unpacked to integer quants and float scales: the one
// definition of each format's values, shared by the reference dequantizer and
// the scalar matmul kernels (which must follow the same math).
#include <cstdint>

#include "kernels/dtype.h"

namespace parley {

// A 32-element block: element i = d * q[i] + m.
struct Block32 {
  int8_t q[32];
  float d;
  float m;
};
using Block32Decoder = void (*)(const uint8_t* block, Block32& out);

// A 256-element super-block of `sub`-element sub-blocks:
// element e = (d * sc[j]) * q[e] - (dmin * m[j]), j = e / sub.
struct BlockK {
  int8_t q[256];
  int8_t sc[16];
  uint8_t m[16];
  int sub;
  float d;
  float dmin;
};
using BlockKDecoder = void (*)(const uint8_t* block, BlockK& out);

// Null when `type` is not of that family.
Block32Decoder block32_decoder(DType type);
BlockKDecoder block_k_decoder(DType type);

// The formats of quant_k_low.cpp (Q2_K, Q3_K) and quant_iq4.cpp (IQ4_NL,
// IQ4_XS): decoders and one-block reference quantizers.
void decode_q2_k(const uint8_t* block, BlockK& out);
void decode_q3_k(const uint8_t* block, BlockK& out);
void decode_iq4_xs(const uint8_t* block, BlockK& out);
void decode_iq4_nl(const uint8_t* block, Block32& out);
void quantize_q2_k(const float* x, uint8_t* block);
void quantize_q3_k(const float* x, uint8_t* block);
void quantize_iq4_xs(const float* x, uint8_t* block);
void quantize_iq4_nl(const float* x, uint8_t* block);

// Per-family quantizers and the K-family dequantizer (quant.cpp dispatches).
void quantize_row_k(DType type, const float* src, uint8_t* dst, int64_t n);
void dequantize_row_k(DType type, const uint8_t* src, float* dst, int64_t n);

}  // namespace parley
