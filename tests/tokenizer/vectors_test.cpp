// llama.cpp's tokenizer test vectors for real vocabularies, and the
// stories260K / tok512 vocabulary against llama2.c's encoder (golden ids).
#include <gtest/gtest.h>

#include <random>

#include "gguf/gguf.h"
#include "test_data.h"
#include "tokenizer/tokenizer.h"

namespace parley {
namespace {

using test::shared_path;

Tokenizer load_gguf_tokenizer(const std::string& path) { return Tokenizer(load_vocab(*gguf::File::open(path))); }

class VocabVectors : public ::testing::TestWithParam<const char*> {};

TEST_P(VocabVectors, EncodeMatchesLlamaCpp) {
  const std::string path = shared_path(std::string("tokenizers/ggml-vocab-") + GetParam() + ".gguf");
  SKIP_IF_MISSING(path);
  const Tokenizer tok = load_gguf_tokenizer(path);
  const std::vector<test::VectorCase> cases = test::load_vectors(path);
  ASSERT_EQ(cases.size(), 46u);
  for (const test::VectorCase& c : cases) {
    EXPECT_EQ(tok.encode(c.text, /*add_special=*/false, /*parse_special=*/false), c.ids) << "text: \"" << c.text << "\"";
  }
}

TEST_P(VocabVectors, DecodeRoundTrips) {
  const std::string path = shared_path(std::string("tokenizers/ggml-vocab-") + GetParam() + ".gguf");
  SKIP_IF_MISSING(path);
  const Tokenizer tok = load_gguf_tokenizer(path);
  for (const test::VectorCase& c : test::load_vectors(path)) {
    EXPECT_EQ(tok.decode(c.ids), c.text) << "ids of \"" << c.text << "\"";
  }
}

// Any bytes, even ill-formed UTF-8, survive encode + decode (byte fallback,
// byte-level BPE); only a literal "▁" would come back as a space from SPM,
// and bytes StarCoder has no token for (C0 C1 F1 F5..FF) as its <unk>.
TEST_P(VocabVectors, RandomBytesRoundTrip) {
  const std::string path = shared_path(std::string("tokenizers/ggml-vocab-") + GetParam() + ".gguf");
  SKIP_IF_MISSING(path);
  const Tokenizer tok = load_gguf_tokenizer(path);
  std::mt19937 rng(42);
  const std::string pool[] = {" ", "  ", "\n", "\t", "a", "Z", "7", "'s", "!", "\xC3\xA9", "\xE4\xBD\xA0",
                              "\xF0\x9F\xA6\x99", "\xED\xA0\x80" /* a surrogate */, "\x80", "\xE2\x96"};
  for (int i = 0; i < 200; ++i) {
    std::string text;
    for (int n = int(rng() % 24); n > 0; --n) text += pool[rng() % std::size(pool)];
    EXPECT_EQ(tok.decode(tok.encode(text, false, false)), text);
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, VocabVectors, ::testing::Values("llama-spm", "phi-3", "gpt-2", "starcoder"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::erase(name, '-');
                           return name;
                         });

}  // namespace
}  // namespace parley
