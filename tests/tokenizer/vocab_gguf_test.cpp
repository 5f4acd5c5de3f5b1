// load_vocab on GGUF files written here (defaults, errors) and on real ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "test_data.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace parley {
namespace {

using gguf::Value;

// Loads a minimal vocabulary file for `model` with `extra` keys added or replaced.
Vocab load_written(const std::string& model, const std::vector<std::pair<std::string, Value>>& extra = {}) {
  gguf::Writer w;
  w.set("general.architecture", Value::str("llama"));
  w.set("tokenizer.ggml.model", Value::str(model));
  w.set("tokenizer.ggml.tokens", Value::strings({"<unk>", "<s>", "</s>", "a", "b", "ab"}));
  if (model == "gpt2") w.set("tokenizer.ggml.merges", Value::strings({"a b"}));
  for (const auto& [key, value] : extra) w.set(key, value);
  const std::string path = test::temp_path(".gguf");
  w.write(path);
  struct Remove {
    std::string path;
    ~Remove() { std::filesystem::remove(path); }
  } remove{path};
  return load_vocab(*gguf::File::open(path));
}

// `load` must throw an Error whose message contains each of `parts`.
void expect_error_with(const std::function<void()>& load, const std::vector<std::string>& parts) {
  try {
    load();
    ADD_FAILURE() << "no error; expected one about \"" << parts.front() << "\"";
  } catch (const Error& e) {
    for (const std::string& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// load_written must throw an Error naming the file and containing `expect`.
void expect_error(const std::string& model, const std::vector<std::pair<std::string, Value>>& extra,
                  const std::string& expect) {
  expect_error_with([&] { load_written(model, extra); }, {expect, ".gguf"});
}

TEST(VocabGguf, SpmDefaults) {
  const Vocab v = load_written("llama");
  EXPECT_EQ(v.kind, Vocab::Kind::Spm);
  EXPECT_EQ(v.size(), 6);
  EXPECT_EQ(v.types, std::vector<TokenType>(6, TokenType::Normal));
  EXPECT_TRUE(v.scores.empty());
  EXPECT_EQ(v.unk, 0);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.eot, -1);
  EXPECT_TRUE(v.add_bos);
  EXPECT_FALSE(v.add_eos);
  EXPECT_TRUE(v.add_space_prefix);
  EXPECT_EQ(v.pre, "default");
  EXPECT_EQ(v.chat_template, "");
}

TEST(VocabGguf, BpeDefaultsAndExplicitKeys) {
  EXPECT_EQ(load_written("gpt2").bos, -1);
  EXPECT_FALSE(load_written("gpt2").add_bos);
  EXPECT_FALSE(load_written("gpt2").add_space_prefix);
  const Vocab v = load_written("gpt2", {{"tokenizer.ggml.bos_token_id", Value::u32(5)},
                                        {"tokenizer.ggml.eos_token_id", Value::i32(4)},
                                        {"tokenizer.ggml.padding_token_id", Value::u32(0xFFFFFFFF)},
                                        {"tokenizer.ggml.eot_token_id", Value::u32(3)},
                                        {"tokenizer.ggml.add_bos_token", Value::boolean(true)},
                                        {"tokenizer.ggml.add_eos_token", Value::boolean(true)},
                                        {"tokenizer.ggml.pre", Value::str("llama-bpe")},
                                        {"tokenizer.ggml.token_type", Value::ints({3, 3, 3, 1, 1, 4})},
                                        {"tokenizer.ggml.scores", Value::floats({0, 0, 0, -1, -2, -3})},
                                        {"tokenizer.chat_template", Value::str("{{ messages }}")}});
  EXPECT_EQ(v.kind, Vocab::Kind::Bpe);
  EXPECT_EQ(v.merges, std::vector<std::string>{"a b"});
  EXPECT_EQ(v.bos, 5);
  EXPECT_EQ(v.eos, 4);
  EXPECT_EQ(v.pad, -1);  // 0xFFFFFFFF means none
  EXPECT_EQ(v.eot, 3);
  EXPECT_TRUE(v.add_bos);
  EXPECT_TRUE(v.add_eos);
  EXPECT_EQ(v.pre, "llama-bpe");
  EXPECT_EQ(v.types[0], TokenType::Control);
  EXPECT_EQ(v.types[5], TokenType::UserDefined);
  EXPECT_EQ(v.scores[4], -2.0f);
  EXPECT_EQ(v.chat_template, "{{ messages }}");
}

TEST(VocabGguf, MalformedVocabulariesThrow) {
  expect_error("bert", {}, "tokenizer.ggml.model \"bert\"");
  expect_error("llama", {{"tokenizer.ggml.tokens", Value::strings({})}}, "tokenizer.ggml.tokens");
  expect_error("llama", {{"tokenizer.ggml.scores", Value::floats({0, 0})}}, "tokenizer.ggml.scores has 2");
  expect_error("llama", {{"tokenizer.ggml.token_type", Value::ints({1})}}, "tokenizer.ggml.token_type has 1");
  expect_error("llama", {{"tokenizer.ggml.token_type", Value::ints({1, 1, 1, 9, 1, 1})}},
               "tokenizer.ggml.token_type[3] is 9");
  expect_error("gpt2", {{"tokenizer.ggml.merges", Value::strings({})}}, "tokenizer.ggml.merges");
}

TEST(VocabGguf, RealFiles) {
  const std::string gpt2 = test::shared_path("tokenizers/ggml-vocab-gpt-2.gguf");
  const std::string phi3 = test::shared_path("tokenizers/ggml-vocab-phi-3.gguf");
  SKIP_IF_MISSING(gpt2);
  SKIP_IF_MISSING(phi3);
  const Vocab g = load_vocab(*gguf::File::open(gpt2));
  EXPECT_EQ(g.kind, Vocab::Kind::Bpe);
  EXPECT_EQ(g.size(), 50257);
  EXPECT_EQ(g.merges.size(), 50000u);
  EXPECT_EQ(g.pre, "gpt-2");
  EXPECT_EQ(g.bos, 50256);
  EXPECT_EQ(g.types[50256], TokenType::Control);
  const Vocab p = load_vocab(*gguf::File::open(phi3));
  EXPECT_EQ(p.kind, Vocab::Kind::Spm);
  EXPECT_EQ(p.eos, 32000);
  EXPECT_EQ(p.pad, 32000);
  EXPECT_NE(p.chat_template.find("<|assistant|>"), std::string::npos);
}

// A vocabulary-only GGUF file in the shape of GPT-NeoX/MPT's: byte-level BPE
// whose added tokens include runs of spaces (user-defined), a DeepSeek-style
// extra word piece (user-defined) and <|endoftext|> (control). No tensors, and
// an architecture Parley cannot run: the tokenizer needs neither.
class AddedTokensGguf : public ::testing::Test {
 protected:
  static constexpr int32_t kSpaces2 = 259, kSpaces4 = 260, kWordPiece = 261, kEndOfText = 262;

  static std::string write(const std::string& arch, const std::string& pre) {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.push_back(bytes_to_alphabet(std::string(1, char(b))));
    // Merges: "Ġ Ġ" (256), "a b" (257), "Ġ ab" (258).
    for (const char* t : {"\xC4\xA0\xC4\xA0", "ab", "\xC4\xA0" "ab", "  ", "    ", "\xC3\xB5", "<|endoftext|>"}) {
      tokens.push_back(t);
    }
    std::vector<int32_t> types(tokens.size(), 1);
    types[kSpaces2] = types[kSpaces4] = types[kWordPiece] = 4;
    types[kEndOfText] = 3;
    gguf::Writer w;
    w.set("general.architecture", Value::str(arch));
    w.set("tokenizer.ggml.model", Value::str("gpt2"));
    w.set("tokenizer.ggml.pre", Value::str(pre));
    w.set("tokenizer.ggml.tokens", Value::strings(tokens));
    w.set("tokenizer.ggml.token_type", Value::ints(types));
    w.set("tokenizer.ggml.merges", Value::strings({"\xC4\xA0 \xC4\xA0", "a b", "\xC4\xA0 ab"}));
    w.set("tokenizer.ggml.eos_token_id", Value::u32(kEndOfText));
    const std::string path = test::temp_path("-" + pre + ".gguf");
    w.write(path);
    return path;
  }
  void TearDown() override {
    for (const std::string& p : written_) std::filesystem::remove(p);
  }
  Tokenizer load(const std::string& arch = "mpt", const std::string& pre = "mpt") {
    written_.push_back(write(arch, pre));
    return Tokenizer::from_gguf(written_.back());
  }
  std::vector<std::string> written_;
};

using Ids = std::vector<int32_t>;

TEST_F(AddedTokensGguf, RunsOfSpacesAreMatchedBeforePreTokenizing) {
  const Tokenizer tok = load();
  // Without the added tokens GPT-2's regex would give "ab", "   ", " ab".
  EXPECT_EQ(tok.encode("ab    ab", false, false), (Ids{257, kSpaces4, 257}));
  EXPECT_EQ(tok.encode("ab     ab", false, false), (Ids{257, kSpaces4, 258}));  // longest first, then " ab"
  EXPECT_EQ(tok.encode("ab  ab", false, true), (Ids{257, kSpaces2, 257}));
  EXPECT_EQ(tok.encode("ab ab", false, false), (Ids{257, 258}));  // a single space is no added token
  EXPECT_EQ(tok.decode({257, kSpaces4, 258}), "ab     ab");
}

TEST_F(AddedTokensGguf, ExtraWordPieceIsMatchedInRawText) {
  const Tokenizer tok = load("deepseek2", "deepseek-coder");
  EXPECT_EQ(tok.encode("ab\xC3\xB5" "ab", false, false), (Ids{257, kWordPiece, 257}));
  EXPECT_EQ(tok.decode({257, kWordPiece, 257}), "ab\xC3\xB5" "ab");
}

TEST_F(AddedTokensGguf, ControlTokensOnlyWithSpecialParsing) {
  const Tokenizer tok = load();
  EXPECT_EQ(tok.encode("ab<|endoftext|>", false, true), (Ids{257, kEndOfText}));
  const Ids plain = tok.encode("ab<|endoftext|>", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), kEndOfText), 0);
  EXPECT_EQ(tok.decode(plain), "ab<|endoftext|>");
  EXPECT_TRUE(tok.is_eog(kEndOfText));
}

TEST_F(AddedTokensGguf, UnknownPreTokenizerIsAnErrorNamingIt) {
  const std::string path = write("mpt", "no-such-pre");
  written_.push_back(path);
  expect_error_with([&] { Tokenizer::from_gguf(path); },
                    {"unknown pre-tokenizer \"no-such-pre\" (tokenizer.ggml.pre)", path});
}

TEST(VocabGguf, SpmIgnoresThePreTokenizerName) {
  gguf::Writer w;
  w.set("general.architecture", Value::str("phi3"));
  w.set("tokenizer.ggml.model", Value::str("llama"));
  w.set("tokenizer.ggml.pre", Value::str("no-such-pre"));
  w.set("tokenizer.ggml.tokens", Value::strings({"<unk>", "<s>", "</s>", "a"}));
  const std::string path = test::temp_path(".gguf");
  w.write(path);
  EXPECT_EQ(Tokenizer::from_gguf(path).vocab().size(), 4);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace parley
