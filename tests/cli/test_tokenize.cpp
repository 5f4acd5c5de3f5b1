// parley tokenize and info on vocabulary-only GGUF files of any architecture:
// the tokenizer is loaded from the metadata alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../tokenizer/test_data.h"
#include "cli_run.h"
#include "gguf/writer.h"
#include "tokenizer/byte_unicode.h"

namespace {

using parley::gguf::Value;
using parley::test::kShared;
using parley::test::run;

std::string scratch(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("parley-tok-" + std::to_string(::getpid()) + "-" + name)).string();
}

std::string ids_line(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? " " : "") + std::to_string(ids[i]);
  return s + "\n";
}

// A vocabulary-only Falcon GGUF (general.architecture "falcon", pre-tokenizer
// "falcon", no tensors): byte-level BPE with a few merges, Falcon's control
// token >>TITLE<< and a user-defined run of two spaces.
class FalconVocab : public ::testing::Test {
 protected:
  static constexpr int kHello = 259, k123 = 262, k45 = 263, kTitle = 264, kTwoSpaces = 265;

  void SetUp() override {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.push_back(parley::bytes_to_alphabet(std::string(1, char(b))));
    const std::vector<std::string> merges = {"H e", "l l", "He ll", "Hell o", "\xC4\xA0 1", "1 2", "12 3", "4 5"};
    for (const std::string& m : merges) tokens.push_back(m.substr(0, m.find(' ')) + m.substr(m.find(' ') + 1));
    tokens.push_back(">>TITLE<<");
    tokens.push_back("  ");
    tokens.push_back("<|endoftext|>");
    std::vector<int32_t> types(tokens.size(), 1);
    types[kTitle] = types.back() = 3;
    types[kTwoSpaces] = 4;
    parley::gguf::Writer w;
    w.set("general.architecture", Value::str("falcon"));
    w.set("general.name", Value::str("falcon-standin"));
    w.set("falcon.block_count", Value::u32(60));
    w.set("tokenizer.ggml.model", Value::str("gpt2"));
    w.set("tokenizer.ggml.pre", Value::str(pre_));
    w.set("tokenizer.ggml.tokens", Value::strings(tokens));
    w.set("tokenizer.ggml.token_type", Value::ints(types));
    w.set("tokenizer.ggml.merges", Value::strings(merges));
    w.set("tokenizer.ggml.eos_token_id", Value::u32(uint32_t(tokens.size() - 1)));
    w.write(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::string pre_ = "falcon";
  const std::string path_ = scratch("ggml-vocab-falcon.gguf");
};

TEST_F(FalconVocab, TokenizeNeedsNoSupportedArchitecture) {
  // Falcon's pre-tokenizer splits digits in threes: " 12345" is " ", "123", "45"
  // (GPT-2's would merge "Ġ1" first).
  const auto r = run("tokenize -m " + path_ + " 'Hello 12345'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, ids_line({kHello, ' ', k123, k45}));
}

TEST_F(FalconVocab, UserDefinedTokensAlwaysControlTokensWithSpecial) {
  EXPECT_EQ(run("tokenize -m " + path_ + " 'Hello  12345'").out, ids_line({kHello, kTwoSpaces, k123, k45}));
  EXPECT_EQ(run("tokenize -m " + path_ + " --special '>>TITLE<<Hello'").out, ids_line({kTitle, kHello}));
  // Without --special the control token's text is plain text: ">>", "TITLE", "<<", "Hello".
  EXPECT_EQ(run("tokenize -m " + path_ + " '>>TITLE<<Hello'").out,
            ids_line({'>', '>', 'T', 'I', 'T', 'L', 'E', '<', '<', kHello}));
}

TEST_F(FalconVocab, InfoDescribesTheVocabulary) {
  const auto r = run("info " + path_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("vocabulary only: falcon-standin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("architecture: falcon"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tokenizer: bpe (pre-tokenizer falcon), 267 tokens, 2 control, 1 user-defined"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("tokenizer.ggml.merges"), std::string::npos) << r.out;
}

class UnknownPreVocab : public FalconVocab {
  void SetUp() override {
    pre_ = "no-such-pre";
    FalconVocab::SetUp();
  }
};

TEST_F(UnknownPreVocab, TokenizeFailsNamingThePreTokenizer) {
  const auto r = run("tokenize -m " + path_ + " 'Hello'");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(path_), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown pre-tokenizer \"no-such-pre\""), std::string::npos) << r.err;
}

// Every vocabulary of ../shared/tokenizers with test vectors, whatever its
// architecture, through the binary: some of llama.cpp's strings each.
TEST(TokenizeCli, SharedVocabulariesMatchLlamaCpp) {
  const std::string dir = kShared + "/tokenizers";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "../shared/tokenizers not present";
  const std::string text_file = scratch("text");
  int vocabularies = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    if (!path.ends_with(".gguf") || !std::filesystem::exists(path + ".inp")) continue;
    ++vocabularies;
    const std::vector<parley::test::VectorCase> cases = parley::test::load_vectors(path);
    for (size_t i = 0; i < cases.size(); i += 7) {
      std::ofstream(text_file, std::ios::binary) << cases[i].text;
      const auto r = run("tokenize --no-bos -m " + path + " -f " + text_file);
      ASSERT_EQ(r.status, 0) << path << ": " << r.err;
      EXPECT_EQ(r.out, ids_line(cases[i].ids)) << path << ", text: \"" << cases[i].text << "\"";
    }
  }
  std::filesystem::remove(text_file);
  EXPECT_GE(vocabularies, 4);
}

TEST(TokenizeCli, InfoOnASharedVocabulary) {
  const std::string path = kShared + "/tokenizers/ggml-vocab-gpt-2.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  const auto r = run("info " + path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("architecture: gpt2 (not needed to tokenize)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tokenizer: bpe (pre-tokenizer gpt-2), 50257 tokens, 1 control, 0 user-defined"),
            std::string::npos)
      << r.out;
}

}  // namespace
