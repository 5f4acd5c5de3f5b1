#pragma once
// UTF-8 decoding/encoding and the Unicode character classes the BPE
// pre-tokenizers match on (\p{L}, \p{N}, \p{P}, \s, ...).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace parley::unicode {

// The first letter of a code point's general category (Cn -> Undefined).
enum class CharClass : uint8_t { Undefined, Letter, Number, Punctuation, Symbol, Mark, Separator, Control };

struct ClassRun {  // a run of code points starting at `first` (unicode_table.cpp)
  char32_t first;
  CharClass cls;
};

CharClass char_class(char32_t cp);
bool is_whitespace(char32_t cp);  // the White_Space property: regex \s
inline bool is_letter(char32_t cp) { return char_class(cp) == CharClass::Letter; }
inline bool is_number(char32_t cp) { return char_class(cp) == CharClass::Number; }
inline bool is_punctuation(char32_t cp) { return char_class(cp) == CharClass::Punctuation; }

// One step of strict UTF-8 decoding (no overlongs, surrogates or values past
// U+10FFFF). Invalid: `len` bytes (the maximal ill-formed subpart, >= 1) must
// be replaced. Incomplete: the rest of the input is a valid but unfinished prefix.
struct Utf8Step {
  enum Kind { Ok, Invalid, Incomplete } kind;
  char32_t cp;  // U+FFFD unless Ok
  size_t len;
};
Utf8Step decode_utf8(std::string_view s, size_t pos);

void append_utf8(std::string& out, char32_t cp);
bool is_valid_utf8(std::string_view s);

constexpr char32_t kReplacement = 0xFFFD;

}  // namespace parley::unicode
