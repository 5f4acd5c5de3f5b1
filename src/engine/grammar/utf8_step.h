#pragma once
// UTF-8 decoding one byte at a time, for text that arrives in pieces which may
// split a character. The state between bytes is one packed word, 0 between
// characters: bits 0-1 the continuation bytes still due, bits 2-4 the
// character's length, bits 5 and up the value so far.
#include <cstdint>

namespace parley::grammar {

struct Utf8Step {
  enum Kind : uint8_t { Invalid, Partial, Complete } kind = Invalid;
  uint32_t state = 0;  // Partial: the new packed state
  uint32_t lo = 0;     // Complete: the character; Partial: the characters
  uint32_t hi = 0;     // the bytes so far can still become, [lo, hi]
};

// Invalid for bytes no valid UTF-8 can continue with: stray continuation
// bytes, C0, C1, F5..FF, overlong forms, surrogates, values over U+10FFFF.
inline Utf8Step utf8_step(uint32_t state, uint8_t byte) {
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  static constexpr uint32_t kMax[5] = {0, 0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
  Utf8Step step;
  uint32_t need, length, value;
  if (state == 0) {
    if (byte < 0x80) return {Utf8Step::Complete, 0, byte, byte};
    length = byte >= 0xC2 && byte <= 0xDF ? 2 : byte >= 0xE0 && byte <= 0xEF ? 3 : byte >= 0xF0 && byte <= 0xF4 ? 4 : 0;
    if (length == 0) return step;
    need = length - 1;
    value = byte & (0x7Fu >> length);
  } else {
    if ((byte & 0xC0) != 0x80) return step;
    need = (state & 3) - 1;
    length = (state >> 2) & 7;
    value = (state >> 5) << 6 | (byte & 0x3F);
  }
  const uint32_t shift = 6 * need;
  uint32_t lo = value << shift, hi = lo | ((1u << shift) - 1);
  if (lo < kMin[length]) lo = kMin[length];
  if (hi > kMax[length]) hi = kMax[length];
  if (lo > hi || (lo >= 0xD800 && hi <= 0xDFFF)) return step;  // overlong, too large, or a surrogate
  if (need == 0) return {Utf8Step::Complete, 0, lo, lo};
  return {Utf8Step::Partial, value << 5 | length << 2 | need, lo, hi};
}

}  // namespace parley::grammar
