#pragma once
// GPT-2's byte-level alphabet: byte-level BPE vocabularies spell every byte as
// a printable code point (printable Latin-1 bytes as themselves, the others as
// U+0100 onwards in byte order), so "Ġ" (U+0120) stands for a space.
#include <cstdint>
#include <string>
#include <string_view>

namespace parley {

char32_t byte_to_unicode(uint8_t b);
int byte_from_unicode(char32_t cp);  // -1 for a code point outside the alphabet

// `bytes` spelled in the alphabet (UTF-8), and back. Decoding keeps code
// points outside the alphabet as they are.
std::string bytes_to_alphabet(std::string_view bytes);
std::string alphabet_to_bytes(std::string_view text);

}  // namespace parley
