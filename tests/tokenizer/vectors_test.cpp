// llama.cpp's tokenizer test vectors for real vocabularies, loaded from their
// vocabulary-only GGUF files whatever the architecture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <random>

#include "test_data.h"
#include "tokenizer/tokenizer.h"

namespace parley {
namespace {

using test::shared_path;

// The vocabularies of ../shared/tokenizers: those it is known to hold (each
// skips with a message when absent), plus every other ggml-vocab-NAME.gguf
// there that has test vectors, whatever its architecture.
std::vector<std::string> vocabulary_names() {
  std::vector<std::string> names = {"llama-spm", "phi-3", "gpt-2", "starcoder"};
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(shared_path("tokenizers"), ec)) {
    const std::string file = entry.path().filename().string();
    if (!file.starts_with("ggml-vocab-") || !file.ends_with(".gguf")) continue;
    if (!std::filesystem::exists(entry.path().string() + ".inp")) continue;
    std::string name = file.substr(11, file.size() - 11 - 5);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

std::string vocabulary_path(const std::string& name) { return shared_path("tokenizers/ggml-vocab-" + name + ".gguf"); }

class VocabVectors : public ::testing::TestWithParam<std::string> {};

// Tokenizer-only loading (no architecture, no weights) encodes every test
// string as llama.cpp does.
TEST_P(VocabVectors, EncodeMatchesLlamaCpp) {
  const std::string path = vocabulary_path(GetParam());
  SKIP_IF_MISSING(path);
  const Tokenizer tok = Tokenizer::from_gguf(path);
  const std::vector<test::VectorCase> cases = test::load_vectors(path);
  ASSERT_FALSE(cases.empty());
  size_t matched = 0;
  for (const test::VectorCase& c : cases) {
    const std::vector<int32_t> ids = tok.encode(c.text, /*add_special=*/false, /*parse_special=*/false);
    EXPECT_EQ(ids, c.ids) << "text: \"" << c.text << "\"";
    matched += ids == c.ids;
  }
  RecordProperty("vectors", std::to_string(matched) + "/" + std::to_string(cases.size()));
}

TEST_P(VocabVectors, DecodeRoundTrips) {
  const std::string path = vocabulary_path(GetParam());
  SKIP_IF_MISSING(path);
  const Tokenizer tok = Tokenizer::from_gguf(path);
  for (const test::VectorCase& c : test::load_vectors(path)) {
    EXPECT_EQ(tok.decode(c.ids), c.text) << "ids of \"" << c.text << "\"";
  }
}

// Any bytes, even ill-formed UTF-8, survive encode + decode (byte fallback,
// byte-level BPE); only a literal "▁" would come back as a space from SPM,
// and bytes StarCoder has no token for (C0 C1 F1 F5..FF) as its <unk>.
TEST_P(VocabVectors, RandomBytesRoundTrip) {
  const std::string path = vocabulary_path(GetParam());
  SKIP_IF_MISSING(path);
  const Tokenizer tok = Tokenizer::from_gguf(path);
  std::mt19937 rng(42);
  const std::string pool[] = {" ", "  ", "\n", "\t", "a", "Z", "7", "'s", "!", "\xC3\xA9", "\xE4\xBD\xA0",
                              "\xF0\x9F\xA6\x99", "\xED\xA0\x80" /* a surrogate */, "\x80", "\xE2\x96"};
  for (int i = 0; i < 200; ++i) {
    std::string text;
    for (int n = int(rng() % 24); n > 0; --n) text += pool[rng() % std::size(pool)];
    EXPECT_EQ(tok.decode(tok.encode(text, false, false)), text);
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, VocabVectors, ::testing::ValuesIn(vocabulary_names()), [](const auto& info) {
  std::string name = info.param;
  std::erase_if(name, [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); });
  return name;
});

}  // namespace
}  // namespace parley
