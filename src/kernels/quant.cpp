// Reference conversions for the float types and the 32-element block types;
// the K types live in quant_k.cpp.
#include "kernels/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/blocks.h"
#include "kernels/decode.h"
#include "util/error.h"
#include "util/fp16.h"

namespace parley {
namespace {

// Quants q[i] (i < 16) and q[i + 16] share byte qs[i]; bit 4 of quant i is
// bit i of qh (when the format has one). Values are shifted by -offset.
void unpack_quants(const uint8_t* qs, const uint8_t* qh, int offset, int8_t q[32]) {
  uint32_t high = 0;
  if (qh) std::memcpy(&high, qh, 4);
  for (int i = 0; i < 16; ++i) {
    const int lo = (qs[i] & 15) | int((high >> i) & 1) << 4;
    const int hi = (qs[i] >> 4) | int((high >> (i + 16)) & 1) << 4;
    q[i] = int8_t(lo - offset);
    q[i + 16] = int8_t(hi - offset);
  }
}

void pack_quants(const uint8_t q[32], uint8_t* qs, uint8_t* qh) {
  uint32_t high = 0;
  for (int i = 0; i < 16; ++i) {
    qs[i] = uint8_t((q[i] & 15) | (q[i + 16] & 15) << 4);
    high |= uint32_t(q[i] >> 4 & 1) << i | uint32_t(q[i + 16] >> 4 & 1) << (i + 16);
  }
  if (qh) std::memcpy(qh, &high, 4);
}

void decode_q8_0(const uint8_t* p, Block32& out) {
  const auto& b = *reinterpret_cast<const BlockQ8_0*>(p);
  std::memcpy(out.q, b.qs, 32);
  out.d = fp16_to_fp32(b.d);
  out.m = 0.0f;
}

void decode_q4_0(const uint8_t* p, Block32& out) {
  const auto& b = *reinterpret_cast<const BlockQ4_0*>(p);
  unpack_quants(b.qs, nullptr, 8, out.q);
  out.d = fp16_to_fp32(b.d);
  out.m = 0.0f;
}

void decode_q4_1(const uint8_t* p, Block32& out) {
  const auto& b = *reinterpret_cast<const BlockQ4_1*>(p);
  unpack_quants(b.qs, nullptr, 0, out.q);
  out.d = fp16_to_fp32(b.d);
  out.m = fp16_to_fp32(b.m);
}

void decode_q5_0(const uint8_t* p, Block32& out) {
  const auto& b = *reinterpret_cast<const BlockQ5_0*>(p);
  unpack_quants(b.qs, b.qh, 16, out.q);
  out.d = fp16_to_fp32(b.d);
  out.m = 0.0f;
}

void decode_q5_1(const uint8_t* p, Block32& out) {
  const auto& b = *reinterpret_cast<const BlockQ5_1*>(p);
  unpack_quants(b.qs, b.qh, 0, out.q);
  out.d = fp16_to_fp32(b.d);
  out.m = fp16_to_fp32(b.m);
}

void quantize_q8_0(const float* x, uint8_t* p) {
  auto& b = *reinterpret_cast<BlockQ8_0*>(p);
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < 32; ++i) b.qs[i] = int8_t(std::round(x[i] * id));
  b.d = fp32_to_fp16(d);
}

// Symmetric: the value of largest magnitude maps to quant 0 (= -levels/2).
float quantize_symmetric(const float* x, int levels, uint8_t q[32]) {
  float max = 0.0f;
  for (int i = 0; i < 32; ++i)
    if (std::fabs(x[i]) > std::fabs(max)) max = x[i];
  const float d = max / float(-levels / 2);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < 32; ++i)
    q[i] = uint8_t(std::min(levels - 1, int(x[i] * id + float(levels / 2) + 0.5f)));
  return d;
}

// Asymmetric: quant 0 is the block minimum, quant levels-1 its maximum.
float quantize_affine(const float* x, int levels, uint8_t q[32], float& min) {
  min = *std::min_element(x, x + 32);
  const float max = *std::max_element(x, x + 32);
  const float d = (max - min) / float(levels - 1);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < 32; ++i) q[i] = uint8_t(std::min(levels - 1, int((x[i] - min) * id + 0.5f)));
  return d;
}

void quantize_q4_0(const float* x, uint8_t* p) {
  auto& b = *reinterpret_cast<BlockQ4_0*>(p);
  uint8_t q[32];
  b.d = fp32_to_fp16(quantize_symmetric(x, 16, q));
  pack_quants(q, b.qs, nullptr);
}

void quantize_q5_0(const float* x, uint8_t* p) {
  auto& b = *reinterpret_cast<BlockQ5_0*>(p);
  uint8_t q[32];
  b.d = fp32_to_fp16(quantize_symmetric(x, 32, q));
  pack_quants(q, b.qs, b.qh);
}

void quantize_q4_1(const float* x, uint8_t* p) {
  auto& b = *reinterpret_cast<BlockQ4_1*>(p);
  uint8_t q[32];
  float min;
  b.d = fp32_to_fp16(quantize_affine(x, 16, q, min));
  b.m = fp32_to_fp16(min);
  pack_quants(q, b.qs, nullptr);
}

void quantize_q5_1(const float* x, uint8_t* p) {
  auto& b = *reinterpret_cast<BlockQ5_1*>(p);
  uint8_t q[32];
  float min;
  b.d = fp32_to_fp16(quantize_affine(x, 32, q, min));
  b.m = fp32_to_fp16(min);
  pack_quants(q, b.qs, b.qh);
}

using Block32Quantizer = void (*)(const float* x, uint8_t* block);

Block32Quantizer block32_quantizer(DType type) {
  switch (type) {
    case DType::Q8_0: return quantize_q8_0;
    case DType::Q4_0: return quantize_q4_0;
    case DType::Q4_1: return quantize_q4_1;
    case DType::Q5_0: return quantize_q5_0;
    case DType::Q5_1: return quantize_q5_1;
    case DType::IQ4_NL: return quantize_iq4_nl;
    default: return nullptr;
  }
}

void check_length(DType type, int64_t n) {
  const int block = traits(type).block_elems;
  if (n < 0 || n % block != 0)
    throw Error("row of " + std::to_string(n) + " elements is not a whole number of " +
                std::string(dtype_name(type)) + " blocks (" + std::to_string(block) + ")");
}

}  // namespace

Block32Decoder block32_decoder(DType type) {
  switch (type) {
    case DType::Q8_0: return decode_q8_0;
    case DType::Q4_0: return decode_q4_0;
    case DType::Q4_1: return decode_q4_1;
    case DType::Q5_0: return decode_q5_0;
    case DType::Q5_1: return decode_q5_1;
    case DType::IQ4_NL: return decode_iq4_nl;
    default: return nullptr;
  }
}

void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  check_length(type, n);
  const auto* p = static_cast<const uint8_t*>(src);
  switch (type) {
    case DType::F32: std::memcpy(dst, src, size_t(n) * 4); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(static_cast<const uint16_t*>(src)[i]);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(static_cast<const uint16_t*>(src)[i]);
      return;
    default: break;
  }
  if (const auto decode = block32_decoder(type)) {
    const int bytes = traits(type).block_bytes;
    Block32 b;
    for (int64_t i = 0; i < n / 32; ++i, dst += 32) {
      decode(p + i * bytes, b);
      for (int j = 0; j < 32; ++j) dst[j] = b.d * float(b.q[j]) + b.m;
    }
    return;
  }
  dequantize_row_k(type, p, dst, n);
}

void quantize_row(DType type, const float* src, void* dst, int64_t n) {
  check_length(type, n);
  auto* p = static_cast<uint8_t*>(dst);
  switch (type) {
    case DType::F32: std::memcpy(dst, src, size_t(n) * 4); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = fp32_to_fp16(src[i]);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = fp32_to_bf16(src[i]);
      return;
    default: break;
  }
  if (const auto quantize = block32_quantizer(type)) {
    const int bytes = traits(type).block_bytes;
    for (int64_t i = 0; i < n / 32; ++i) quantize(src + i * 32, p + i * bytes);
    return;
  }
  quantize_row_k(type, src, p, n);
}

}  // namespace parley
