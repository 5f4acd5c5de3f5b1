// normalise_question: the key static answers are matched by. Works on code
// points (invalid UTF-8 bytes are dropped): width, then case, then
// whitespace and punctuation.
#include <cstdint>

#include "state/static_answers.h"

namespace parley::state {
namespace {

// Decodes one UTF-8 sequence at s[i] and advances i; -1 for an invalid one.
int32_t next_code_point(const std::string& s, size_t& i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i++);
  if (b0 < 0x80) return b0;
  const int extra = b0 >= 0xF0 && b0 < 0xF5 ? 3 : b0 >= 0xE0 ? 2 : b0 >= 0xC2 && b0 < 0xE0 ? 1 : -1;
  if (extra < 0 || i + extra > s.size()) return -1;
  int32_t cp = b0 & (0x3F >> extra);
  for (int k = 0; k < extra; ++k) {
    if ((byte(i) & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (byte(i++) & 0x3F);
  }
  static const int32_t min_of[] = {0, 0x80, 0x800, 0x10000};
  return cp < min_of[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000) ? -1 : cp;
}

void append_utf8(std::string& out, int32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Full-width ASCII forms (U+FF01..U+FF5E) and the ideographic space.
int32_t narrow(int32_t cp) {
  if (cp >= 0xFF01 && cp <= 0xFF5E) return cp - 0xFEE0;
  return cp == 0x3000 ? ' ' : cp;
}

bool in(int32_t cp, int32_t lo, int32_t hi) { return cp >= lo && cp <= hi; }

// Simple case folding for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic.
int32_t fold(int32_t cp) {
  if (in(cp, 'A', 'Z') || (in(cp, 0xC0, 0xDE) && cp != 0xD7)) return cp + 0x20;
  if (cp < 0x100) return cp;
  if (cp == 0x130) return 'i';
  if (cp == 0x178) return 0xFF;
  if (in(cp, 0x100, 0x137) || in(cp, 0x14A, 0x177)) return cp | 1;        // pairs: upper even
  if (in(cp, 0x139, 0x148) || in(cp, 0x179, 0x17E)) return cp + (cp & 1);  // pairs: upper odd
  if (in(cp, 0x391, 0x3AB) && cp != 0x3A2) return cp + 0x20;
  if (cp == 0x386) return 0x3AC;
  if (in(cp, 0x388, 0x38A)) return cp + 0x25;
  if (cp == 0x38C) return 0x3CC;
  if (in(cp, 0x38E, 0x38F)) return cp + 0x3F;
  if (cp == 0x3C2) return 0x3C3;  // final sigma
  if (in(cp, 0x410, 0x42F)) return cp + 0x20;
  if (in(cp, 0x400, 0x40F)) return cp + 0x50;
  return cp;
}

bool is_space(int32_t cp) {
  return in(cp, 9, 13) || cp == ' ' || cp == 0x85 || cp == 0xA0 || cp == 0x1680 || in(cp, 0x2000, 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F;
}

// ASCII punctuation and symbols, Latin-1 punctuation, General Punctuation,
// CJK and half-width punctuation, and invisible format characters.
bool is_dropped(int32_t cp) {
  if (cp < 0x80) return in(cp, 0x21, 0x2F) || in(cp, 0x3A, 0x40) || in(cp, 0x5B, 0x60) || in(cp, 0x7B, 0x7E);
  return cp == 0xA1 || cp == 0xA7 || cp == 0xAB || cp == 0xAD || cp == 0xB6 || cp == 0xB7 || cp == 0xBB ||
         cp == 0xBF || in(cp, 0x200B, 0x200F) || in(cp, 0x2010, 0x2027) || in(cp, 0x2030, 0x205E) ||
         in(cp, 0x3001, 0x3003) || in(cp, 0x3008, 0x3011) || in(cp, 0x3014, 0x301F) || in(cp, 0xFF61, 0xFF65) ||
         cp == 0xFEFF;
}

}  // namespace

std::string normalise_question(const std::string& text) {
  std::string out;
  bool space_pending = false;
  for (size_t i = 0; i < text.size();) {
    int32_t cp = next_code_point(text, i);
    if (cp < 0) continue;
    cp = fold(narrow(cp));
    if (is_space(cp)) {
      space_pending = !out.empty();
    } else if (!is_dropped(cp)) {
      if (space_pending) out += ' ';
      space_pending = false;
      append_utf8(out, cp);
    }
  }
  return out;
}

}  // namespace parley::state
