// Pre-tokenizer families: the splits their regexes define (expected values
// from Python's `regex` module running the same regex sequences).
#include <gtest/gtest.h>

#include <string>

#include "tokenizer/pretokenize.h"
#include "util/error.h"

namespace parley {
namespace {

using Words = std::vector<std::string>;

Words split(const char* pre, std::string_view text) {
  Words out;
  for (std::string_view w : pretokenize(pre_tokenizer_for(pre).family, text)) out.emplace_back(w);
  return out;
}

TEST(Pretokenize, Gpt2) {
  EXPECT_EQ(split("gpt-2", "Hello, y'all! How  are\n 3.14"),
            (Words{"Hello", ",", " y", "'", "all", "!", " How", " ", " are", "\n", " 3", ".", "14"}));
  EXPECT_EQ(split("gpt-2", "it's   "), (Words{"it", "'s", "   "}));
}

TEST(Pretokenize, Llama3) {
  EXPECT_EQ(split("llama-bpe", "I'LL pay $1234 now!!\n\n  ok"),
            (Words{"I", "'LL", " pay", " $", "123", "4", " now", "!!\n\n", " ", " ok"}));
  EXPECT_TRUE(pre_tokenizer_for("llama-bpe").ignore_merges);
  EXPECT_FALSE(pre_tokenizer_for("gpt-2").ignore_merges);
}

TEST(Pretokenize, Qwen2SplitsSingleDigits) {
  EXPECT_EQ(split("qwen2", "x=1234;\r\n\tdone"), (Words{"x", "=", "1", "2", "3", "4", ";\r\n", "\tdone"}));
}

TEST(Pretokenize, StarcoderSplitsDigitsFirst) {
  EXPECT_EQ(split("starcoder", "v 12 +3"), (Words{"v", " ", "1", "2", " +", "3"}));
  EXPECT_EQ(split("command-r", "v 12 +3"), split("starcoder", "v 12 +3"));
}

TEST(Pretokenize, DefaultAndFalconSplitPunctuationAndDigitTriples) {
  EXPECT_EQ(split("default", "a+b=12345; ok"), (Words{"a", "+", "b", "=", "123", "45", ";", " ok"}));
  EXPECT_EQ(split("falcon", "f(`x`) 12345"), (Words{"f", "(`", "x", "`)", " ", "123", "45"}));
}

TEST(Pretokenize, Deepseek) {
  EXPECT_EQ(split("deepseek-coder", "Hi \xE4\xBD\xA0\xE5\xA5\xBD" "123\nok."),
            (Words{"Hi", " ", "\xE4\xBD\xA0\xE5\xA5\xBD", "1", "2", "3", "\n", "ok", "."}));
  EXPECT_EQ(split("deepseek-llm", "Hi! \xE4\xBD\xA0\xE5\xA5\xBD 42  "),
            (Words{"Hi", "!", " ", "\xE4\xBD\xA0\xE5\xA5\xBD", " ", "42", "  "}));
}

TEST(Pretokenize, KeepsInvalidUtf8BytesInPlace) {
  // The stray bytes act as U+FFFD (a symbol) but come back unchanged.
  EXPECT_EQ(split("gpt-2", "ab\xFF\xC3 cd"), (Words{"ab", "\xFF\xC3", " cd"}));
  EXPECT_TRUE(split("gpt-2", "").empty());
}

TEST(Pretokenize, BloomAndVikingSplitAtSentencePunctuation) {
  const std::string text = "Hello, world! (a|b) 42 cats\u2026 \u4F60\u597D\u3002ok";
  EXPECT_EQ(split("bloom", text), (Words{"Hello", ",", " world", "! (", "a", "|", "b", ")", " 42", " cats",
                                         "\u2026", " \u4F60\u597D", "\u3002", "ok"}));
  EXPECT_EQ(split("poro-chat", text), split("bloom", text));
  EXPECT_EQ(split("viking", text), (Words{"Hello", ",", " world", "! (", "a", "|", "b", ")", " ", "4", "2", " cats",
                                          "\u2026", " \u4F60\u597D", "\u3002", "ok"}));
  EXPECT_EQ(split("bloom", "  x"), (Words{" ", " x"}));
}

TEST(Pretokenize, AliasesShareTheirFamily) {
  EXPECT_EQ(pre_tokenizer_for("mpt").family, PreTokenizer::Gpt2);
  EXPECT_EQ(pre_tokenizer_for("falcon").family, PreTokenizer::Falcon);
  EXPECT_EQ(pre_tokenizer_for("minerva-7b").family, PreTokenizer::Starcoder);
  EXPECT_EQ(pre_tokenizer_for("megrez").family, PreTokenizer::Qwen2);
  EXPECT_EQ(pre_tokenizer_for("chatglm-bpe").family, PreTokenizer::Llama3);
  EXPECT_FALSE(pre_tokenizer_for("chatglm-bpe").ignore_merges);
  EXPECT_TRUE(pre_tokenizer_for("falcon3").ignore_merges);
}

TEST(Pretokenize, UnknownNameIsAnErrorNamingIt) {
  try {
    pre_tokenizer_for("no-such-pre");
    ADD_FAILURE() << "no error for an unknown pre-tokenizer";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown pre-tokenizer \"no-such-pre\" (tokenizer.ggml.pre)"), std::string::npos) << what;
    EXPECT_NE(what.find("known: default, gpt-2"), std::string::npos) << what;
  }
  EXPECT_THROW(pre_tokenizer_for(""), Error);
}

}  // namespace
}  // namespace parley
