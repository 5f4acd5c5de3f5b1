#include "tokenizer/byte_unicode.h"

#include <array>

#include "tokenizer/unicode.h"

namespace parley {
namespace {

bool maps_to_itself(int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct Alphabet {
  std::array<char32_t, 256> to_cp{};
  std::array<int16_t, 512> to_byte{};  // every code point of the alphabet is below 512
  Alphabet() {
    to_byte.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      to_cp[b] = maps_to_itself(b) ? char32_t(b) : next++;
      to_byte[to_cp[b]] = int16_t(b);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

char32_t byte_to_unicode(uint8_t b) { return alphabet().to_cp[b]; }

int byte_from_unicode(char32_t cp) { return cp < 512 ? alphabet().to_byte[cp] : -1; }

std::string bytes_to_alphabet(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) unicode::append_utf8(out, byte_to_unicode(uint8_t(c)));
  return out;
}

std::string alphabet_to_bytes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const unicode::Utf8Step step = unicode::decode_utf8(text, pos);
    const int b = step.kind == unicode::Utf8Step::Ok ? byte_from_unicode(step.cp) : -1;
    if (b >= 0) {
      out += char(b);
    } else {
      out.append(text.substr(pos, step.len));
    }
    pos += step.len;
  }
  return out;
}

}  // namespace parley
