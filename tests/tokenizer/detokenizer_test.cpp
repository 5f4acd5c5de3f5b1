// StreamingDetokenizer: whole characters only, the same text as decode().
#include <gtest/gtest.h>

#include <cstdio>

#include "gguf/gguf.h"
#include "test_data.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace parley {
namespace {

using Ids = std::vector<int32_t>;

// Streams `ids` as a whole text, checking that every push() result is valid
// UTF-8; returns the text.
std::string stream(const Tokenizer& tok, const Ids& ids) {
  StreamingDetokenizer detok(tok, /*text_start=*/true);
  std::string text;
  for (int32_t id : ids) {
    const std::string part = detok.push(id);
    EXPECT_TRUE(unicode::is_valid_utf8(part)) << "push(" << id << ") gave a partial character";
    text += part;
  }
  return text + detok.flush();
}

class StreamVectors : public ::testing::TestWithParam<const char*> {};

TEST_P(StreamVectors, StreamEqualsDecode) {
  const std::string path = test::shared_path(std::string("tokenizers/ggml-vocab-") + GetParam() + ".gguf");
  SKIP_IF_MISSING(path);
  const Tokenizer tok(load_vocab(*gguf::File::open(path)));
  for (const test::VectorCase& c : test::load_vectors(path)) EXPECT_EQ(stream(tok, c.ids), tok.decode(c.ids)) << c.text;
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, StreamVectors, ::testing::Values("llama-spm", "phi-3", "gpt-2", "starcoder"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::erase(name, '-');
                           return name;
                         });

// <unk> <s> </s> <0x00>..<0xFF> ▁t: the layout of llama2.c vocabularies.
Tokenizer byte_tokenizer() {
  std::vector<test::TokenSpec> specs = {{"<unk>", 0, TokenType::Unknown}, {"<s>", 0, TokenType::Control},
                                        {"</s>", 0, TokenType::Control}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    specs.push_back({name, 0, TokenType::Byte});
  }
  specs.push_back({"\xE2\x96\x81t"});
  Vocab v = test::make_spm_vocab(specs);
  v.bos = 1;
  return Tokenizer(v);
}

int32_t byte_id(int b) { return 3 + b; }

TEST(StreamingDetokenizer, HoldsPartialCharacters) {
  const Tokenizer tok = byte_tokenizer();
  StreamingDetokenizer detok(tok);
  EXPECT_EQ(detok.push(byte_id(0xE2)), "");
  EXPECT_EQ(detok.push(byte_id(0x96)), "");
  EXPECT_EQ(detok.push(byte_id(0x81)), "\xE2\x96\x81");
  EXPECT_EQ(detok.push(byte_id('a')), "a");
  EXPECT_EQ(detok.flush(), "");
}

TEST(StreamingDetokenizer, InvalidBytesBecomeReplacementCharacters) {
  const Tokenizer tok = byte_tokenizer();
  StreamingDetokenizer detok(tok);
  EXPECT_EQ(detok.push(byte_id(0xFF)), "\xEF\xBF\xBD");           // never valid: replaced at once
  EXPECT_EQ(detok.push(byte_id(0xE2)), "");
  EXPECT_EQ(detok.push(byte_id('x')), "\xEF\xBF\xBDx");          // the E2 cannot complete now
  EXPECT_EQ(detok.push(byte_id(0xF0)), "");
  EXPECT_EQ(detok.flush(), "\xEF\xBF\xBD");                       // unfinished at the end
  EXPECT_EQ(detok.flush(), "");
}

TEST(StreamingDetokenizer, SpacePrefixStrippedOnlyAtTextStartOrAfterBos) {
  const Tokenizer tok = byte_tokenizer();
  const int32_t t = 259;  // "▁t"
  EXPECT_EQ(stream(tok, {t, t}), "t t");
  EXPECT_EQ(stream(tok, {1, t, 1, t}), "tt");
  StreamingDetokenizer continuation(tok);  // the default: text continues
  EXPECT_EQ(continuation.push(t), " t");
  EXPECT_EQ(continuation.push(1), "");
  EXPECT_EQ(continuation.push(t), "t");
  EXPECT_EQ(tok.decode({1, t, t}), "t t");
  EXPECT_EQ(stream(tok, {2, 0}), "");  // control and unknown tokens give nothing
}

TEST(StreamingDetokenizer, ContinuesAPromptLikeDecodeOfEverything) {
  const std::string path = test::shared_path("models/tok512.bin");
  SKIP_IF_MISSING(path);
  const Tokenizer tok(load_llama2c_vocab(path, 512));
  const std::string story = "Once upon a time, a caf\xC3\xA9 \xF0\x9F\xA6\x99 opened.\nThe end";
  const Ids all = tok.encode(story, true, false);
  ASSERT_EQ(tok.decode(all), story);
  for (size_t prompt = 1; prompt < all.size(); ++prompt) {  // BOS + prompt ids, then the continuation
    std::string text = tok.decode(Ids(all.begin(), all.begin() + prompt));
    if (!unicode::is_valid_utf8(text)) continue;  // a prompt is text: it never ends inside a character
    StreamingDetokenizer detok(tok, false, all[prompt - 1]);
    for (size_t i = prompt; i < all.size(); ++i) text += detok.push(all[i]);
    EXPECT_EQ(text + detok.flush(), story) << "prompt of " << prompt << " ids";
  }
  EXPECT_EQ(stream(tok, all), story);
}

}  // namespace
}  // namespace parley
