// Q2_K, Q3_K, IQ4_NL and IQ4_XS blocks built byte by byte from the GGUF block
// definitions must dequantize to exactly the values the definitions give.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/quant.h"

namespace parley {
namespace {

// The IQ4 codebook as the format defines it.
constexpr int kCodebook[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

void put_half(std::vector<uint8_t>& b, size_t at, uint16_t v) {
  b[at] = uint8_t(v & 0xff);
  b[at + 1] = uint8_t(v >> 8);
}

std::vector<float> decode_all(DType t, const std::vector<uint8_t>& bytes, int n) {
  std::vector<float> out(size_t(n), -12345.0f);
  dequantize_row(t, bytes.data(), out.data(), n);
  return out;
}

uint8_t pattern(int i) { return uint8_t(i * 37 + 11); }

// The 2-bit quant of element e in qs (Q2_K and Q3_K): element 128h + 32k + l
// is bits 2k..2k+1 of qs[32h + l].
int two_bits(const std::vector<uint8_t>& b, size_t qs, int e) {
  const int h = e / 128, k = (e % 128) / 32, l = e % 32;
  return b[qs + size_t(32 * h + l)] >> (2 * k) & 3;
}

// scales[16], qs[64], d, dmin; element: d * (sc & 15) * q - dmin * (sc >> 4).
TEST(QuantBlocksLow, Q2_K) {
  std::vector<uint8_t> b(84);
  for (int j = 0; j < 16; ++j) b[size_t(j)] = uint8_t(((j * 5 + 1) & 15) | ((j * 3) & 15) << 4);
  for (int i = 0; i < 64; ++i) b[size_t(16 + i)] = pattern(i);
  put_half(b, 80, 0x4000);  // d = 2
  put_half(b, 82, 0x3800);  // dmin = 0.5
  const auto y = decode_all(DType::Q2_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int j = e / 16;
    EXPECT_EQ(y[size_t(e)], 2.0f * float((j * 5 + 1) & 15) * float(two_bits(b, 16, e)) - 0.5f * float((j * 3) & 15))
        << e;
  }
}

// hmask[32], qs[64], scales[12], d. Scale j (6 bits, minus 32): low 4 bits in
// scales[j] (j < 8, low nibble) or scales[j - 8] (high nibble), top 2 bits at
// bit 2 * (j / 4) of scales[8 + j % 4]. Quant: 2 bits of qs, minus 4 unless
// bit 4h + k of hmask[l] is set.
TEST(QuantBlocksLow, Q3_K) {
  std::vector<uint8_t> b(110, 0);
  int sc[16];
  for (int j = 0; j < 16; ++j) {
    sc[j] = (j * 23 + 5) & 63;
    b[size_t(96 + j % 8)] = uint8_t(b[size_t(96 + j % 8)] | (sc[j] & 15) << (j < 8 ? 0 : 4));
    b[size_t(104 + j % 4)] = uint8_t(b[size_t(104 + j % 4)] | (sc[j] >> 4) << (2 * (j / 4)));
  }
  for (int i = 0; i < 32; ++i) b[size_t(i)] = pattern(i + 100);
  for (int i = 0; i < 64; ++i) b[size_t(32 + i)] = pattern(i);
  put_half(b, 108, 0xb800);  // d = -0.5
  const auto y = decode_all(DType::Q3_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, k = (e % 128) / 32, l = e % 32;
    const bool high = b[size_t(l)] >> (4 * h + k) & 1;
    const int q = two_bits(b, 32, e) - (high ? 0 : 4);
    EXPECT_EQ(y[size_t(e)], -0.5f * float(sc[e / 16] - 32) * float(q)) << e;
  }
}

// d, qs[16]; element i < 16: d * codebook[qs[i] & 15], i + 16: the high nibble.
TEST(QuantBlocksLow, IQ4_NL) {
  std::vector<uint8_t> b(36);
  for (int blk = 0; blk < 2; ++blk) {
    put_half(b, size_t(18 * blk), blk == 0 ? 0x4000 : 0xb400);  // d = 2, then -0.25
    for (int i = 0; i < 16; ++i) b[size_t(18 * blk + 2 + i)] = pattern(i + 16 * blk);
  }
  const auto y = decode_all(DType::IQ4_NL, b, 64);
  for (int blk = 0; blk < 2; ++blk) {
    const float d = blk == 0 ? 2.0f : -0.25f;
    for (int i = 0; i < 16; ++i) {
      const uint8_t byte = pattern(i + 16 * blk);
      EXPECT_EQ(y[size_t(32 * blk + i)], d * float(kCodebook[byte & 15])) << blk << " " << i;
      EXPECT_EQ(y[size_t(32 * blk + 16 + i)], d * float(kCodebook[byte >> 4])) << blk << " " << i;
    }
  }
}

// d, scales_h (u16), scales_l[4], qs[128]: sub-block j's 6-bit scale has its
// low 4 bits in nibble j % 2 of scales_l[j / 2] and its top 2 at bit 2j of
// scales_h; its 32 elements are an IQ4_NL block's, times (scale - 32).
TEST(QuantBlocksLow, IQ4_XS) {
  std::vector<uint8_t> b(136, 0);
  put_half(b, 0, 0x3400);  // d = 0.25
  int ls[8];
  uint16_t high = 0;
  for (int j = 0; j < 8; ++j) {
    ls[j] = (j * 29 + 7) & 63;
    b[size_t(4 + j / 2)] = uint8_t(b[size_t(4 + j / 2)] | (ls[j] & 15) << (4 * (j % 2)));
    high = uint16_t(high | (ls[j] >> 4) << (2 * j));
  }
  put_half(b, 2, high);
  for (int i = 0; i < 128; ++i) b[size_t(8 + i)] = pattern(i);
  const auto y = decode_all(DType::IQ4_XS, b, 256);
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 16; ++i) {
      const uint8_t byte = pattern(16 * j + i);
      const float s = 0.25f * float(ls[j] - 32);
      EXPECT_EQ(y[size_t(32 * j + i)], s * float(kCodebook[byte & 15])) << j << " " << i;
      EXPECT_EQ(y[size_t(32 * j + 16 + i)], s * float(kCodebook[byte >> 4])) << j << " " << i;
    }
}

TEST(QuantBlocksLow, RejectsPartialBlocks) {
  std::vector<uint8_t> b(1024);
  std::vector<float> x(300);
  for (const DType t : {DType::Q2_K, DType::Q3_K, DType::IQ4_XS}) {
    EXPECT_THROW(dequantize_row(t, b.data(), x.data(), 128), std::exception) << dtype_name(t);
    EXPECT_THROW(quantize_row(t, x.data(), b.data(), 300), std::exception) << dtype_name(t);
  }
  EXPECT_THROW(dequantize_row(DType::IQ4_NL, b.data(), x.data(), 48), std::exception);
  EXPECT_THROW(quantize_row(DType::IQ4_NL, x.data(), b.data(), 16), std::exception);
}

TEST(QuantBlocksLow, TypeIdsAndSizes) {
  const struct {
    uint32_t id;
    const char* name;
    int elems, bytes;
  } want[] = {{10, "Q2_K", 256, 84}, {11, "Q3_K", 256, 110}, {20, "IQ4_NL", 32, 18}, {23, "IQ4_XS", 256, 136}};
  for (const auto& w : want) {
    const auto t = dtype_traits(w.id);
    ASSERT_TRUE(t) << w.name;
    EXPECT_EQ(t->name, w.name);
    EXPECT_EQ(t->block_elems, w.elems) << w.name;
    EXPECT_EQ(t->block_bytes, w.bytes) << w.name;
  }
}

}  // namespace
}  // namespace parley
