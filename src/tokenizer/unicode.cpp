#include "tokenizer/unicode.h"

#include <algorithm>

namespace parley::unicode {

extern const ClassRun kClassRuns[];
extern const size_t kClassRunCount;

CharClass char_class(char32_t cp) {
  if (cp > 0x10FFFF) return CharClass::Undefined;
  const ClassRun* end = kClassRuns + kClassRunCount;
  const ClassRun* run = std::upper_bound(kClassRuns, end, cp,
                                         [](char32_t c, const ClassRun& r) { return c < r.first; });
  return run[-1].cls;  // kClassRuns[0].first == 0, so run > kClassRuns
}

bool is_whitespace(char32_t cp) {
  switch (cp) {
    case 0x20: case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x2000 && cp <= 0x200A);
  }
}

namespace {

bool is_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// Valid range of the second byte after lead `b0` (the rest are 80..BF); this
// excludes overlongs (E0, F0), surrogates (ED) and values past U+10FFFF (F4).
void second_byte_range(uint8_t b0, uint8_t& lo, uint8_t& hi) {
  lo = 0x80;
  hi = 0xBF;
  if (b0 == 0xE0) lo = 0xA0;
  if (b0 == 0xED) hi = 0x9F;
  if (b0 == 0xF0) lo = 0x90;
  if (b0 == 0xF4) hi = 0x8F;
}

}  // namespace

Utf8Step decode_utf8(std::string_view s, size_t pos) {
  const uint8_t b0 = uint8_t(s[pos]);
  if (b0 < 0x80) return {Utf8Step::Ok, b0, 1};
  size_t need;
  char32_t cp;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2, cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3, cp = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4, cp = b0 & 0x07;
  } else {
    return {Utf8Step::Invalid, kReplacement, 1};
  }
  uint8_t lo, hi;
  second_byte_range(b0, lo, hi);
  for (size_t i = 1; i < need; ++i) {
    if (pos + i >= s.size()) return {Utf8Step::Incomplete, kReplacement, i};
    const uint8_t b = uint8_t(s[pos + i]);
    const bool ok = i == 1 ? (b >= lo && b <= hi) : is_continuation(b);
    if (!ok) return {Utf8Step::Invalid, kReplacement, i};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {Utf8Step::Ok, cp, need};
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

bool is_valid_utf8(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    const Utf8Step step = decode_utf8(s, pos);
    if (step.kind != Utf8Step::Ok) return false;
    pos += step.len;
  }
  return true;
}

}  // namespace parley::unicode
