#pragma once
// Block layouts of the quantized GGUF types (as defined by the GGUF / ggml
// format). Scales are IEEE half floats stored as raw bits. Element i of a block
// is described next to each struct.
#include <cstdint>
#include <cstring>

namespace parley {

constexpr int kQK = 32;    // elements per block of the "legacy" types
constexpr int kQKK = 256;  // elements per super-block of the K types

// Element i: d * qs[i].
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
// Element i < 16: d * ((qs[i] & 15) - 8); element i + 16: d * ((qs[i] >> 4) - 8).
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
// As Q4_0 without the -8, plus m: d * q + m.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};
// As Q4_0, with bit i of the little-endian 32-bit qh as bit 4 of element i's
// quant, and -16 instead of -8.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// As Q5_0 without the -16, plus m: d * q + m.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// Eight sub-blocks of 32 with 6-bit scale sc[j] and min m[j] (packed in
// `scales`, see unpack_k_scales). Chunk c (of 64 elements) uses qs[32c..32c+31]:
// low nibbles are sub-block 2c, high nibbles sub-block 2c+1.
// Element: d * sc[j] * q - dmin * m[j].
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kQKK / 2];
};
// As Q4_K with a fifth quant bit: element l of sub-block j takes bit j of qh[l].
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
// Sixteen sub-blocks of 16 with int8 scales. Half h (128 elements) uses
// ql[64h..], qh[32h..]; for l < 32 its quants (6 bits, minus 32) are
//   element l:      ql[l] & 15      | (qh[l] >> 0 & 3) << 4
//   element l + 32: ql[l + 32] & 15 | (qh[l] >> 2 & 3) << 4
//   element l + 64: ql[l] >> 4      | (qh[l] >> 4 & 3) << 4
//   element l + 96: ql[l + 32] >> 4 | (qh[l] >> 6 & 3) << 4
// Element e of the block: d * scales[e / 16] * q.
struct BlockQ6_K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  uint16_t d;
};

// Sixteen sub-blocks of 16 with 4-bit scale (low nibble of scales[j]) and
// min (high nibble). Half h (128 elements) uses qs[32h..32h+31]; element
// 128h + 32k + l (l < 32) is bits 2k, 2k+1 of qs[32h + l].
// Element e: d * (scales[e/16] & 15) * q - dmin * (scales[e/16] >> 4).
struct BlockQ2_K {
  uint8_t scales[kQKK / 16];
  uint8_t qs[kQKK / 4];
  uint16_t d;
  uint16_t dmin;
};
// Sixteen sub-blocks of 16 with signed 6-bit scales (see unpack_q3_k_scales).
// The low two quant bits are laid out as Q2_K's; bit 4h + k of hmask[l] is
// the third bit of element 128h + 32k + l. Quant q = low | third << 2, in
// [0, 7]; element e: d * sc[e/16] * (q - 4).
struct BlockQ3_K {
  uint8_t hmask[kQKK / 8];
  uint8_t qs[kQKK / 4];
  uint8_t scales[12];
  uint16_t d;
};
// 4-bit indices into the non-linear codebook kIq4Values, laid out as Q4_0's
// nibbles: element i < 16 is qs[i] & 15, element i + 16 qs[i] >> 4.
// Element: d * kIq4Values[index].
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
// Eight sub-blocks of 32, each laid out as an IQ4_NL block (qs[16j..]), with
// 6-bit scales: low 4 bits in nibble j % 2 of scales_l[j / 2], high 2 bits
// at bit 2j of scales_h. Element of sub-block j: d * (ls[j] - 32) * value.
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQKK / 64];
  uint8_t qs[kQKK / 2];
};

// The IQ4 codebook (fixed by the format).
alignas(16) inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                      1,    13,   25,  38,  53,  69,  89,  113};

static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136);

// The 6-bit scales sc[0..7] and mins m[0..7] of Q4_K / Q5_K, as 8 bytes
// each (byte j of the little-endian word = sub-block j). Bytes 0-3 of
// `packed` hold sc[0..3] in their low 6 bits, bytes 4-7 m[0..3]; bytes 8-11
// hold the low nibbles of sc[4..7] (low half) and m[4..7] (high half), whose
// top two bits are the top bits of bytes 0-3 (sc) and 4-7 (m).
// (static: this header is also compiled into the per-ISA kernel files.)
static inline void unpack_k_scales(const uint8_t* packed, uint64_t& sc, uint64_t& m) {
  uint32_t w[3];
  std::memcpy(w, packed, 12);
  const uint32_t lo6 = 0x3f3f3f3f, lo4 = 0x0f0f0f0f, lo2 = 0x03030303;
  sc = (w[0] & lo6) | uint64_t((w[2] & lo4) | ((w[0] >> 6) & lo2) << 4) << 32;
  m = (w[1] & lo6) | uint64_t(((w[2] >> 4) & lo4) | ((w[1] >> 6) & lo2) << 4) << 32;
}

// Q3_K's sixteen 6-bit scales, biased by 32, as int8 (sc[j] - 32). Byte j of
// `packed` (j < 8) holds the low 4 bits of scale j (low nibble) and of scale
// j + 8 (high nibble); bits 2(j/4)..2(j/4)+1 of byte 8 + j % 4 are scale j's top two bits.
static inline void unpack_q3_k_scales(const uint8_t* packed, int8_t sc[16]) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? packed[j] & 15 : packed[j - 8] >> 4;
    const int high = packed[8 + j % 4] >> (2 * (j / 4)) & 3;
    sc[j] = int8_t((low | high << 4) - 32);
  }
}

// IQ4_XS's eight scales, biased by 32, as int (ls[j] - 32).
static inline int iq4_xs_scale(const BlockIQ4_XS& b, int j) {
  const int low = b.scales_l[j / 2] >> (4 * (j % 2)) & 15;
  const int high = b.scales_h >> (2 * j) & 3;
  return (low | high << 4) - 32;
}

}  // namespace parley
