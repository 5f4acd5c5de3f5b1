// Hand-built blocks, written byte by byte from the GGUF block definitions, must
// dequantize to exactly the values the definitions give. Scales are chosen so
// every product is exact in float.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/quant.h"

namespace parley {
namespace {

void put16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
  b[at] = uint8_t(v & 0xff);
  b[at + 1] = uint8_t(v >> 8);
}

std::vector<float> dequant(DType t, const std::vector<uint8_t>& bytes, int n) {
  std::vector<float> out(size_t(n), -12345.0f);
  dequantize_row(t, bytes.data(), out.data(), n);
  return out;
}

TEST(QuantBlocks, F32IsCopied) {
  const float v[3] = {1.5f, -0.0f, 3e-38f};
  std::vector<uint8_t> b(sizeof v);
  std::memcpy(b.data(), v, sizeof v);
  const auto y = dequant(DType::F32, b, 3);
  EXPECT_EQ(y[0], 1.5f);
  EXPECT_EQ(y[2], 3e-38f);
}

TEST(QuantBlocks, F16) {
  std::vector<uint8_t> b(12);
  const uint16_t h[6] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x3555, 0x8000};
  for (int i = 0; i < 6; ++i) put16(b, size_t(2 * i), h[i]);
  const auto y = dequant(DType::F16, b, 6);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -2.0f);
  EXPECT_EQ(y[2], 65504.0f);
  EXPECT_EQ(y[3], 0x1p-24f);  // smallest subnormal
  EXPECT_EQ(y[4], 0.333251953125f);
  EXPECT_EQ(y[5], 0.0f);
  EXPECT_TRUE(std::signbit(y[5]));
}

TEST(QuantBlocks, BF16) {
  std::vector<uint8_t> b(6);
  put16(b, 0, 0x3f80);
  put16(b, 2, 0xc049);
  put16(b, 4, 0x4780);
  const auto y = dequant(DType::BF16, b, 3);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -3.140625f);
  EXPECT_EQ(y[2], 65536.0f);
}

TEST(QuantBlocks, Q8_0) {
  std::vector<uint8_t> b(2 * 34);
  for (int blk = 0; blk < 2; ++blk) {
    put16(b, size_t(34 * blk), blk == 0 ? 0x3800 : 0xc000);  // d = 0.5, then -2
    for (int i = 0; i < 32; ++i) b[size_t(34 * blk + 2 + i)] = uint8_t(int8_t(i * 8 - 128));
  }
  const auto y = dequant(DType::Q8_0, b, 64);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(y[size_t(i)], 0.5f * float(i * 8 - 128)) << i;
    EXPECT_EQ(y[size_t(32 + i)], -2.0f * float(i * 8 - 128)) << i;
  }
  EXPECT_EQ(y[0], -64.0f);
}

// Q4_0 / Q4_1 nibbles: byte i holds element i (low) and element i + 16 (high).
uint8_t nibble_pattern(int i) { return uint8_t((i * 5 + 3) & 15) | uint8_t((15 - i) << 4); }

TEST(QuantBlocks, Q4_0) {
  std::vector<uint8_t> b(18);
  put16(b, 0, 0x4000);  // d = 2
  for (int i = 0; i < 16; ++i) b[size_t(2 + i)] = nibble_pattern(i);
  const auto y = dequant(DType::Q4_0, b, 32);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(y[size_t(i)], 2.0f * float(((i * 5 + 3) & 15) - 8)) << i;
    EXPECT_EQ(y[size_t(i + 16)], 2.0f * float((15 - i) - 8)) << i;
  }
  EXPECT_EQ(y[16], 14.0f);
  EXPECT_EQ(y[31], -16.0f);
}

TEST(QuantBlocks, Q4_1) {
  std::vector<uint8_t> b(20);
  put16(b, 0, 0x3c00);  // d = 1
  put16(b, 2, 0xbe00);  // m = -1.5
  for (int i = 0; i < 16; ++i) b[size_t(4 + i)] = nibble_pattern(i);
  const auto y = dequant(DType::Q4_1, b, 32);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(y[size_t(i)], float((i * 5 + 3) & 15) - 1.5f) << i;
    EXPECT_EQ(y[size_t(i + 16)], float(15 - i) - 1.5f) << i;
  }
}

// Q5: bit i of the 32-bit qh is bit 4 of element i.
TEST(QuantBlocks, Q5_0) {
  std::vector<uint8_t> b(22);
  put16(b, 0, 0x3800);  // d = 0.5
  const uint32_t qh = 0x8001a5c3;
  for (int i = 0; i < 4; ++i) b[size_t(2 + i)] = uint8_t(qh >> (8 * i));
  for (int i = 0; i < 16; ++i) b[size_t(6 + i)] = nibble_pattern(i);
  const auto y = dequant(DType::Q5_0, b, 32);
  for (int i = 0; i < 16; ++i) {
    const int lo = ((i * 5 + 3) & 15) | int(qh >> i & 1) << 4;
    const int hi = (15 - i) | int(qh >> (i + 16) & 1) << 4;
    EXPECT_EQ(y[size_t(i)], 0.5f * float(lo - 16)) << i;
    EXPECT_EQ(y[size_t(i + 16)], 0.5f * float(hi - 16)) << i;
  }
  EXPECT_EQ(y[0], 0.5f * float((3 | 16) - 16));  // bit 0 set
  EXPECT_EQ(y[31], 0.5f * float((0 | 16) - 16));  // bit 31 set, nibble 0
}

TEST(QuantBlocks, Q5_1) {
  std::vector<uint8_t> b(24);
  put16(b, 0, 0x3400);  // d = 0.25
  put16(b, 2, 0x4200);  // m = 3
  const uint32_t qh = 0x0ff000f1;
  for (int i = 0; i < 4; ++i) b[size_t(4 + i)] = uint8_t(qh >> (8 * i));
  for (int i = 0; i < 16; ++i) b[size_t(8 + i)] = nibble_pattern(i);
  const auto y = dequant(DType::Q5_1, b, 32);
  for (int i = 0; i < 16; ++i) {
    const int lo = ((i * 5 + 3) & 15) | int(qh >> i & 1) << 4;
    const int hi = (15 - i) | int(qh >> (i + 16) & 1) << 4;
    EXPECT_EQ(y[size_t(i)], 0.25f * float(lo) + 3.0f) << i;
    EXPECT_EQ(y[size_t(i + 16)], 0.25f * float(hi) + 3.0f) << i;
  }
}

// Q4_K / Q5_K scales: sc = {1,2,3,4,5,6,7,63}, m = {0,1,2,3,60,5,6,7}, packed
// by hand (bytes 0-3: sc[0..3] | top bits of sc[4..7]; 4-7: m likewise;
// 8-11: low nibbles of sc[4..7] | low nibbles of m[4..7] << 4).
const uint8_t kScales[12] = {0x01, 0x02, 0x03, 0xc4, 0xc0, 0x01, 0x02, 0x03, 0xc5, 0x56, 0x67, 0x7f};
const int kSc[8] = {1, 2, 3, 4, 5, 6, 7, 63};
const int kMin[8] = {0, 1, 2, 3, 60, 5, 6, 7};

std::vector<uint8_t> k_header(size_t size) {
  std::vector<uint8_t> b(size);
  put16(b, 0, 0x3c00);  // d = 1
  put16(b, 2, 0x3800);  // dmin = 0.5
  for (int i = 0; i < 12; ++i) b[size_t(4 + i)] = kScales[i];
  return b;
}

// Element e: chunk c = e / 64 uses qs[32c + l % 32], low nibble for l < 32.
int q4k_quant(const uint8_t* qs, int e) {
  const int c = e / 64, l = e % 64;
  const uint8_t byte = qs[32 * c + l % 32];
  return l < 32 ? byte & 15 : byte >> 4;
}

TEST(QuantBlocks, Q4_K) {
  auto b = k_header(144);
  for (int i = 0; i < 128; ++i) b[size_t(16 + i)] = uint8_t(i * 7);
  const auto y = dequant(DType::Q4_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int j = e / 32;
    EXPECT_EQ(y[size_t(e)], float(kSc[j] * q4k_quant(b.data() + 16, e)) - 0.5f * float(kMin[j])) << e;
  }
  EXPECT_EQ(y[255], 63.0f * 7.0f - 3.5f);  // qs[127] = 0x79: high nibble 7
  EXPECT_EQ(y[128], 5.0f * float((7 * 64) & 15) - 30.0f);
}

TEST(QuantBlocks, Q5_K) {
  auto b = k_header(176);
  for (int i = 0; i < 32; ++i) b[size_t(16 + i)] = uint8_t(i * 37 + 1);  // qh
  for (int i = 0; i < 128; ++i) b[size_t(48 + i)] = uint8_t(i * 7);
  const auto y = dequant(DType::Q5_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int j = e / 32;  // sub-block j takes bit j of qh[e % 32]
    const int q = q4k_quant(b.data() + 48, e) | (b[size_t(16 + e % 32)] >> j & 1) << 4;
    EXPECT_EQ(y[size_t(e)], float(kSc[j] * q) - 0.5f * float(kMin[j])) << e;
  }
  EXPECT_EQ(y[0], 1.0f * float(0 | 16) - 0.0f);  // qh[0] = 1: bit 0 set
}

TEST(QuantBlocks, Q6_K) {
  std::vector<uint8_t> b(210);
  for (int i = 0; i < 128; ++i) b[size_t(i)] = uint8_t(i * 5);           // ql
  for (int i = 0; i < 64; ++i) b[size_t(128 + i)] = uint8_t(i * 11 + 3);  // qh
  for (int i = 0; i < 16; ++i) b[size_t(192 + i)] = uint8_t(int8_t(i * 9 - 70));
  put16(b, 208, 0x3400);  // d = 0.25
  const auto y = dequant(DType::Q6_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, k = e % 128 / 32, l = e % 32;
    const uint8_t ql = b[size_t(64 * h + l + (k & 1) * 32)];
    const uint8_t qh = b[size_t(128 + 32 * h + l)];
    const int q = ((k < 2 ? ql & 15 : ql >> 4) | (qh >> (2 * k) & 3) << 4) - 32;
    EXPECT_EQ(y[size_t(e)], 0.25f * float(e / 16 * 9 - 70) * float(q)) << e;
  }
  // Element 0: ql[0] = 0, qh[0] = 3 -> quant 48 - 32 = 16; scale -70.
  EXPECT_EQ(y[0], 0.25f * -70.0f * 16.0f);
}

TEST(QuantBlocks, RejectsPartialBlocks) {
  std::vector<float> x(48), y(48);
  std::vector<uint8_t> b(64);
  EXPECT_THROW(dequantize_row(DType::Q8_0, b.data(), y.data(), 48), std::exception);
  EXPECT_THROW(quantize_row(DType::Q4_K, x.data(), b.data(), 48), std::exception);
}

}  // namespace
}  // namespace parley
