// SentencePiece-style encoding on small vocabularies built in code.
#include <gtest/gtest.h>

#include <cstdio>

#include "test_data.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace parley {
namespace {

using test::make_spm_vocab;
using Ids = std::vector<int32_t>;
constexpr const char* kSp = "\xE2\x96\x81";  // ▁

std::string sp(const std::string& s) { return kSp + s; }

// <unk> <s> </s>, then the tokens given.
Vocab llama_like(std::vector<test::TokenSpec> tokens) {
  tokens.insert(tokens.begin(), {{"<unk>", 0, TokenType::Unknown},
                                 {"<s>", 0, TokenType::Control},
                                 {"</s>", 0, TokenType::Control}});
  Vocab v = make_spm_vocab(tokens);
  v.unk = 0, v.bos = 1, v.eos = 2;
  v.add_bos = true;
  return v;
}

TEST(Spm, MergesHighestScoreFirst) {
  // "abc": "bc" outscores "ab", so a + bc; with "ab" ahead it is ab + c.
  Tokenizer bc_first(llama_like({{"a"}, {"b"}, {"c"}, {"ab", -2}, {"bc", -1}}));
  EXPECT_EQ(bc_first.encode("abc", false, false), (Ids{0 /* <unk>: no "▁" token */, 3, 7}));
  Vocab v = llama_like({{"a"}, {"b"}, {"c"}, {"ab", -1}, {"bc", -2}});
  v.add_space_prefix = false;
  EXPECT_EQ(Tokenizer(v).encode("abc", false, false), (Ids{6, 5}));
}

TEST(Spm, TiesMergeLeftmostFirst) {
  Vocab v = llama_like({{"a"}, {"ab", -1}, {"ba", -1}, {"b"}});
  v.add_space_prefix = false;
  EXPECT_EQ(Tokenizer(v).encode("aba", false, false), (Ids{4, 3}));  // ab + a, not a + ba
}

TEST(Spm, MergesChainIntoLongTokens) {
  Tokenizer tok(llama_like({{kSp}, {"h"}, {"e"}, {"l"}, {"o"}, {sp("h"), -1}, {"el", -2}, {sp("hel"), -3},
                            {"lo", -4}, {sp("hello"), -5}}));
  EXPECT_EQ(tok.encode("hello", true, false), (Ids{1, 12}));
  EXPECT_EQ(tok.encode("hello hello", false, false), (Ids{12, 12}));
  EXPECT_EQ(tok.decode({1, 12, 12}), "hello hello");
}

TEST(Spm, UnknownCharactersFallBackToBytes) {
  std::vector<test::TokenSpec> specs = {{kSp}, {"a"}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    specs.push_back({name, 0, TokenType::Byte});
  }
  Tokenizer tok(llama_like(specs));
  // é is C3 A9: bytes tokens 5 + 0xC3, 5 + 0xA9.
  EXPECT_EQ(tok.encode("a\xC3\xA9", false, false), (Ids{3, 4, 5 + 0xC3, 5 + 0xA9}));
  EXPECT_EQ(tok.decode({3, 4, 5 + 0xC3, 5 + 0xA9}), "a\xC3\xA9");
}

TEST(Spm, UnknownCharactersWithoutByteTokensAreUnk) {
  Tokenizer tok(llama_like({{kSp}, {"a"}}));
  EXPECT_EQ(tok.encode("a\xC3\xA9" "a", false, false), (Ids{3, 4, 0, 4}));
}

TEST(Spm, SpacePrefixOnlyWhenSet) {
  Vocab v = llama_like({{kSp}, {"a"}, {sp("a"), -1}});
  EXPECT_EQ(Tokenizer(v).encode("a a", false, false), (Ids{5, 5}));
  EXPECT_EQ(Tokenizer(v).encode("", true, false), (Ids{1}));
  v.add_space_prefix = false;
  EXPECT_EQ(Tokenizer(v).encode("a a", false, false), (Ids{4, 5}));
  v.add_eos = true;
  EXPECT_EQ(Tokenizer(v).encode("a", true, false), (Ids{1, 4, 2}));
}

TEST(Spm, LongInputStaysFast) {
  // O(n log n): 200k characters merge in well under a second even under ASan.
  Vocab v = llama_like({{"a"}, {"b"}, {"ab", -1}, {"abab", -2}});
  v.add_space_prefix = false;
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "ab";
  const Ids ids = Tokenizer(v).encode(text, false, false);
  EXPECT_EQ(ids, Ids(50000, 6));
}

TEST(Spm, RejectsInconsistentVocab) {
  Vocab v = llama_like({{"a"}});
  v.scores.pop_back();
  EXPECT_THROW(Tokenizer{v}, Error);
  v = llama_like({{"a"}});
  v.types.pop_back();
  EXPECT_THROW(Tokenizer{v}, Error);
  v = llama_like({{"a"}});
  v.eos = 99;
  EXPECT_THROW(Tokenizer{v}, Error);
  EXPECT_THROW(Tokenizer(llama_like({{"a"}})).token_to_piece(4), Error);
}

}  // namespace
}  // namespace parley
