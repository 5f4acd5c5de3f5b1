// Character classes, strict UTF-8 decoding and GPT-2's byte alphabet.
#include <gtest/gtest.h>

#include "tokenizer/byte_unicode.h"
#include "tokenizer/unicode.h"

namespace parley {
namespace {

using unicode::CharClass;
using unicode::Utf8Step;

TEST(Unicode, CharClasses) {
  EXPECT_EQ(unicode::char_class('a'), CharClass::Letter);
  EXPECT_EQ(unicode::char_class(0x4F60), CharClass::Letter);   // 你
  EXPECT_EQ(unicode::char_class('7'), CharClass::Number);
  EXPECT_EQ(unicode::char_class(0xBD), CharClass::Number);     // ½
  EXPECT_EQ(unicode::char_class('!'), CharClass::Punctuation);
  EXPECT_EQ(unicode::char_class('$'), CharClass::Symbol);
  EXPECT_EQ(unicode::char_class(0x1F999), CharClass::Symbol);  // 🦙
  EXPECT_EQ(unicode::char_class(0x301), CharClass::Mark);
  EXPECT_EQ(unicode::char_class(' '), CharClass::Separator);
  EXPECT_EQ(unicode::char_class('\n'), CharClass::Control);
  EXPECT_EQ(unicode::char_class(0x378), CharClass::Undefined);
  EXPECT_EQ(unicode::char_class(0x10FFFF), CharClass::Undefined);
  EXPECT_EQ(unicode::char_class(0x110000), CharClass::Undefined);
  EXPECT_TRUE(unicode::is_whitespace('\t'));
  EXPECT_TRUE(unicode::is_whitespace(0x3000));
  EXPECT_FALSE(unicode::is_whitespace(0x200B));  // zero width space is no White_Space
  EXPECT_FALSE(unicode::is_whitespace('x'));
}

TEST(Unicode, DecodesStrictly) {
  const auto step = [](std::string_view s) { return unicode::decode_utf8(s, 0); };
  EXPECT_EQ(step("\xE2\x96\x81").cp, char32_t(0x2581));
  EXPECT_EQ(step("\xF0\x9F\xA6\x99").len, 4u);
  EXPECT_EQ(step("\xC0\xAF").kind, Utf8Step::Invalid);      // overlong
  EXPECT_EQ(step("\xED\xA0\x80").kind, Utf8Step::Invalid);  // surrogate
  EXPECT_EQ(step("\xF4\x90\x80\x80").kind, Utf8Step::Invalid);  // past U+10FFFF
  EXPECT_EQ(step("\x80").kind, Utf8Step::Invalid);
  EXPECT_EQ(step("\xE2\x96").kind, Utf8Step::Incomplete);
  EXPECT_EQ(step("\xE2\x96").len, 2u);
  EXPECT_EQ(step("\xE2\x41").kind, Utf8Step::Invalid);
  EXPECT_EQ(step("\xE2\x41").len, 1u);
  EXPECT_TRUE(unicode::is_valid_utf8("caf\xC3\xA9 \xF0\x9F\xA6\x99"));
  EXPECT_FALSE(unicode::is_valid_utf8("caf\xC3"));
}

// What request bodies are checked with (the server answers 400 invalid_utf8).
TEST(Unicode, ValidUtf8RefusesEveryIllFormedSequence) {
  EXPECT_TRUE(unicode::is_valid_utf8("plain ascii"));
  EXPECT_TRUE(unicode::is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(unicode::is_valid_utf8("\xFF"));
  EXPECT_FALSE(unicode::is_valid_utf8("\xC3"));              // truncated
  EXPECT_FALSE(unicode::is_valid_utf8("\xE2\x82"));          // truncated
  EXPECT_FALSE(unicode::is_valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(unicode::is_valid_utf8("\xE0\x80\xAF"));      // overlong '/'
  EXPECT_FALSE(unicode::is_valid_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(unicode::is_valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(unicode::is_valid_utf8("a\x80z"));            // lone continuation byte
}

TEST(Unicode, EncodesEveryLength) {
  for (char32_t cp : {char32_t(0x41), char32_t(0xE9), char32_t(0x2581), char32_t(0x1F999)}) {
    std::string s;
    unicode::append_utf8(s, cp);
    const Utf8Step step = unicode::decode_utf8(s, 0);
    EXPECT_EQ(step.kind, Utf8Step::Ok);
    EXPECT_EQ(step.cp, cp);
    EXPECT_EQ(step.len, s.size());
  }
}

TEST(ByteAlphabet, MatchesGpt2) {
  EXPECT_EQ(byte_to_unicode(' '), char32_t(0x120));   // Ġ
  EXPECT_EQ(byte_to_unicode('\n'), char32_t(0x10A));  // Ċ
  EXPECT_EQ(byte_to_unicode(0), char32_t(0x100));
  EXPECT_EQ(byte_to_unicode(0x7F), char32_t(0x121));
  EXPECT_EQ(byte_to_unicode(0xAD), char32_t(0x143));
  EXPECT_EQ(byte_to_unicode('A'), char32_t('A'));
  EXPECT_EQ(byte_to_unicode(0xE9), char32_t(0xE9));
  for (int b = 0; b < 256; ++b) EXPECT_EQ(byte_from_unicode(byte_to_unicode(uint8_t(b))), b);
  EXPECT_EQ(byte_from_unicode(0x2581), -1);
  const std::string all = [] {
    std::string s;
    for (int b = 0; b < 256; ++b) s += char(b);
    return s;
  }();
  EXPECT_EQ(alphabet_to_bytes(bytes_to_alphabet(all)), all);
  EXPECT_EQ(bytes_to_alphabet(" hi"), "\xC4\xA0hi");
}

}  // namespace
}  // namespace parley
