#pragma once
// Small AVX2 building blocks of the *_avx2.cpp kernels. Internal linkage on
// purpose: each per-ISA file must get its own copy compiled with its flags.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace parley {
namespace {

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

inline float half_to_float(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

inline int32_t hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// e^x to about 2e-7 relative: x = k ln2 + r with |r| <= ln2 / 2 (ln2 split in
// two so k ln2 is exact), e^r by its Taylor polynomial to degree 6, then the
// exponent bits add k. Results below the normal range flush to zero; inputs
// above 88 give e^88.
inline __m256 exp8(__m256 x) {
  const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.428606765330187e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i scale = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(p, _mm256_castsi256_ps(scale)));
}

// Per group of 4 bytes, sum of u[i] * s[i] (u unsigned, s signed); each
// adjacent pair's sum must fit int16 (true for quants of at most 6 bits, or
// |u| <= 128 against |s| <= 127).
inline __m256i dot_u8s8(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

// 16 bytes of packed nibbles -> 32 bytes: the low nibbles, then the high ones.
inline __m256i unpack_nibbles(const uint8_t* qs) {
  const __m128i b = load128(qs);
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0x0f));
}

// Byte i = 0x10 where bit i of the 32-bit little-endian word at p is set.
inline __m256i bits_to_0x10(const uint8_t* p) {
  uint32_t bits;
  std::memcpy(&bits, p, 4);
  const __m256i spread = _mm256_shuffle_epi8(  // byte i <- byte i / 8 of bits
      _mm256_set1_epi32(int(bits)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3,
                       3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// The K types' d and dmin (two halves at p) times the activation scale dx,
// each broadcast.
inline void scale_pair(const uint8_t* p, float dx, __m256& d, __m256& dmin) {
  uint32_t halves;
  std::memcpy(&halves, p, 4);
  const __m128 v = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(int(halves))), _mm_set1_ps(dx));
  d = _mm256_broadcastss_ps(v);
  dmin = _mm256_broadcastss_ps(_mm_movehdup_ps(v));
}

// Bytes m0..m7 of a word -> int16 lanes m0 m0 m1 m1 ... m7 m7 (one per 16-sum).
inline __m256i pairs_epi16(uint64_t m) {
  const __m128i v = _mm_cvtsi64_si128(int64_t(m));
  return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(v, v));
}

// Q3_K's sixteen scales (12 packed bytes, see unpack_q3_k_scales) as int8,
// minus their bias 32. Word g of the top-bit bytes 8-11, shifted by 2g,
// holds the top bits of scales 4g .. 4g+3.
inline __m128i q3_k_scales_epi8(const uint8_t* packed) {
  uint64_t lo;
  uint32_t top;
  std::memcpy(&lo, packed, 8);
  std::memcpy(&top, packed + 8, 4);
  const uint64_t nib = 0x0f0f0f0f0f0f0f0full;
  const __m128i low = _mm_set_epi64x(int64_t((lo >> 4) & nib), int64_t(lo & nib));
  const __m128i high = _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(int(top)), _mm_setr_epi32(0, 2, 4, 6)),
                                     _mm_set1_epi8(3));
  return _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi32(high, 4)), _mm_set1_epi8(32));
}

// IQ4_XS's eight scales (scales_h, scales_l[4] at p), minus their bias 32,
// as int32 lanes.
inline __m256i iq4_xs_scales_epi32(const uint8_t* p) {
  uint32_t h, l;  // h's top half (scales_l[0..1]) falls outside the masks
  std::memcpy(&h, p, 4);
  std::memcpy(&l, p + 2, 4);
  // Broadcast from memory and shifted per lane: no general-register transfers.
  const __m256i low = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_set1_epi32(int(l)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
      _mm256_set1_epi32(15));
  const __m256i high = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_set1_epi32(int(h)), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)), _mm256_set1_epi32(3));
  return _mm256_sub_epi32(_mm256_or_si256(low, _mm256_slli_epi32(high, 4)), _mm256_set1_epi32(32));
}

}  // namespace
}  // namespace parley
