// Special tokens in text: split out with parse_special, plain text without.
#include <gtest/gtest.h>

#include <algorithm>

#include "gguf/gguf.h"
#include "test_data.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/tokenizer.h"

namespace parley {
namespace {

using Ids = std::vector<int32_t>;
constexpr const char* kSpmSpace = "\xE2\x96\x81";  // ▁

// Characters of "<|ab>", a space token and three special tokens.
Tokenizer small_tokenizer() {
  Vocab v = test::make_spm_vocab({{"<"}, {"|"}, {"a"}, {"b"}, {">"}, {kSpmSpace},
                                  {"<|a|>", 0, TokenType::Control},       // 6
                                  {"<|a|>b", 0, TokenType::UserDefined},  // 7: longer, same start
                                  {"<b>", 0, TokenType::Normal}});        // 8: not special
  return Tokenizer(v);
}

TEST(SpecialTokens, SplitOutWhenParsing) {
  const Tokenizer tok = small_tokenizer();
  // After a special token the SPM space prefix applies again, as at the start.
  EXPECT_EQ(tok.encode("a<|a|>a", false, true), (Ids{5, 2, 6, 5, 2}));
  EXPECT_EQ(tok.encode("<|a|><|a|>", false, true), (Ids{6, 6}));
}

TEST(SpecialTokens, LongestMatchWins) {
  EXPECT_EQ(small_tokenizer().encode("<|a|>ba", false, true), (Ids{7, 5, 2}));
}

TEST(SpecialTokens, PlainTextWhenNotParsing) {
  EXPECT_EQ(small_tokenizer().encode("<|a|>", false, false), (Ids{5, 0, 1, 2, 1, 4}));
  EXPECT_EQ(small_tokenizer().encode("<b>", false, true), (Ids{5, 0, 3, 4}));  // a normal token is no special
}

TEST(SpecialTokens, UserDefinedTokensAreFoundWithoutSpecialParsing) {
  const Tokenizer tok = small_tokenizer();
  // The user-defined "<|a|>b" is matched in the raw text either way, and the
  // SPM space prefix applies again after it, as after any added token.
  EXPECT_EQ(tok.encode("<|a|>b", false, false), (Ids{7}));
  EXPECT_EQ(tok.encode("a<|a|>ba", false, false), (Ids{5, 2, 7, 5, 2}));
  EXPECT_EQ(tok.encode("a<|a|>ba", false, true), (Ids{5, 2, 7, 5, 2}));
  // The control "<|a|>" is not, so its text stays plain without special parsing.
  EXPECT_EQ(tok.encode("<|a|>a", false, false), (Ids{5, 0, 1, 2, 1, 4, 2}));
  EXPECT_EQ(tok.encode("<|a|>a", false, true), (Ids{6, 5, 2}));
}

TEST(SpecialTokens, UnknownTokensOnlyWithSpecialParsing) {
  Vocab v = test::make_spm_vocab({{"<"}, {"u"}, {">"}, {"\xE2\x96\x81"}, {"<u>", 0, TokenType::Unknown}});
  v.unk = 4;
  const Tokenizer tok(v);
  EXPECT_EQ(tok.encode("<u>", false, false), (Ids{3, 0, 1, 2}));
  EXPECT_EQ(tok.encode("<u>", false, true), (Ids{4}));
}

TEST(SpecialTokens, SplitKeepsControlTextsPlainUnlessParsing) {
  const Vocab v = test::make_spm_vocab({{"x"}, {"<c>", 0, TokenType::Control}, {"<u>", 0, TokenType::UserDefined}});
  const SpecialTokens specials(v);
  EXPECT_TRUE(specials.has_user_defined());
  auto ids = [&](std::string_view text, bool parse) {
    std::vector<std::pair<std::string, int32_t>> out;
    for (const SpecialTokens::Fragment& f : specials.split(text, parse)) out.emplace_back(f.text, f.id);
    return out;
  };
  using Parts = std::vector<std::pair<std::string, int32_t>>;
  EXPECT_EQ(ids("x<c>x<u>", false), (Parts{{"x<c>x", -1}, {"<u>", 2}}));
  EXPECT_EQ(ids("x<c>x<u>", true), (Parts{{"x", -1}, {"<c>", 1}, {"x", -1}, {"<u>", 2}}));
  EXPECT_FALSE(SpecialTokens(test::make_spm_vocab({{"x"}, {"<c>", 0, TokenType::Control}})).has_user_defined());
}

TEST(SpecialTokens, DecodeShowsThemOnlyWhenAsked) {
  const Tokenizer tok = small_tokenizer();
  EXPECT_EQ(tok.decode({5, 2, 6, 5, 2}), "a a");
  EXPECT_EQ(tok.decode({5, 2, 6, 5, 2}, /*special=*/true), "a<|a|> a");
  EXPECT_EQ(tok.token_to_piece(7), "<|a|>b");  // user-defined tokens are text
}

TEST(SpecialTokens, Phi3ChatMarkers) {
  const std::string path = test::shared_path("tokenizers/ggml-vocab-phi-3.gguf");
  SKIP_IF_MISSING(path);
  const Tokenizer tok(load_vocab(*gguf::File::open(path)));
  const Ids parsed = tok.encode("<|user|>\nHi<|end|>\n<|assistant|>\n", true, true);
  ASSERT_GE(parsed.size(), 5u);
  EXPECT_EQ(parsed.front(), 1);  // BOS
  EXPECT_EQ(parsed[1], 32010);   // <|user|>
  EXPECT_EQ(std::count(parsed.begin(), parsed.end(), 32007), 1);  // <|end|>
  EXPECT_EQ(std::count(parsed.begin(), parsed.end(), 32001), 1);  // <|assistant|>
  // As in llama.cpp, text after a special token gets the SPM space prefix again.
  EXPECT_EQ(tok.decode(parsed, true), "<s><|user|> \nHi<|end|> \n<|assistant|> \n");
  const Ids plain = tok.encode("<|user|>\nHi<|end|>", true, false);
  for (int32_t id : plain) EXPECT_LT(id, 32000) << "special token id from unparsed text";
  EXPECT_EQ(tok.decode(plain), "<|user|>\nHi<|end|>");
  EXPECT_TRUE(tok.is_eog(32007));  // <|end|>
  EXPECT_TRUE(tok.is_eog(32000));  // EOS <|endoftext|>
  EXPECT_FALSE(tok.is_eog(32010));
}

// Phi-3's "</s>" is a user-defined token (type 4): found in plain text too.
TEST(SpecialTokens, Phi3UserDefinedEndOfSentence) {
  const std::string path = test::shared_path("tokenizers/ggml-vocab-phi-3.gguf");
  SKIP_IF_MISSING(path);
  const Tokenizer tok = Tokenizer::from_gguf(path);
  ASSERT_EQ(tok.vocab().types[2], TokenType::UserDefined);
  Ids expected = tok.encode("Hi", false, false);
  expected.push_back(2);
  const Ids after = tok.encode("there", false, false);  // the space prefix again, as at the start
  expected.insert(expected.end(), after.begin(), after.end());
  EXPECT_EQ(tok.encode("Hi</s>there", false, false), expected);
  EXPECT_EQ(tok.encode("Hi</s>there", false, true), expected);
  // Its control tokens are not, unless parsing special tokens.
  EXPECT_EQ(std::count(expected.begin(), expected.end(), 32007), 0);
  EXPECT_EQ(tok.encode("<|end|>", false, true), (Ids{32007}));
  EXPECT_NE(tok.encode("<|end|>", false, false), (Ids{32007}));
}

}  // namespace
}  // namespace parley
