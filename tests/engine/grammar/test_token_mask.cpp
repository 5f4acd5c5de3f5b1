#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "engine/grammar/grammar.h"
#include "grammar_test_util.h"
#include "tokenizer/tokenizer.h"

namespace parley::grammar {
namespace {

// Each token's allows() on a fresh copy of the matcher.
std::vector<uint8_t> brute_force_mask(const Matcher& m, const std::vector<std::string>& pieces) {
  std::vector<uint8_t> mask(pieces.size(), 0);
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Matcher copy = m;
    mask[i] = !pieces[i].empty() && copy.allows(pieces[i]);
  }
  return mask;
}

std::vector<std::string> hand_made_vocabulary() {
  std::vector<std::string> pieces = {"", "{", "}", "[", "]", "\"", ":", ",", " ", "\n", "\n  ", "\n    ", "{\"", "\":",
                                     "\": ", "\",", ", \"", "true", "false", "null", "nul", "tr", "0", "1", "12", "-",
                                     "-0", "0.", ".5", "1e", "e+", "E-3", "\\", "\\n", "\\u", "\\u00", "e9", "abc",
                                     " the", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xE2", "\x82", "\xAC",
                                     "\xE2\x82", "\x82\xAC", "\xF0", "\x9F\x98", "\xFF", "\xC0\x80", "\xED\xA0\x80",
                                     "a\xC3", "\xA9z", "\"}", "\"]", "]}", "}}", "\x01", "\t", "", "\"\"", "[]", "{}"};
  for (int b = 32; b < 127; ++b) pieces.emplace_back(1, static_cast<char>(b));
  return pieces;
}

// Walks random texts of the grammar token by token (tokens of the
// vocabulary) and compares the mask with the brute force at every step.
void compare_along_walks(const std::shared_ptr<const Grammar>& g, const std::vector<std::string>& pieces, int walks,
                         int steps, uint32_t seed) {
  const TokenTrie trie(pieces);
  ASSERT_EQ(trie.size(), static_cast<int32_t>(pieces.size()));
  std::mt19937 rng(seed);
  std::vector<uint8_t> mask;
  for (int w = 0; w < walks; ++w) {
    Matcher m(g);
    std::string text;
    for (int step = 0; step < steps && !m.must_end(); ++step) {
      m.allowed_tokens(trie, mask);
      ASSERT_EQ(mask, brute_force_mask(m, pieces)) << "after " << ::testing::PrintToString(text);
      std::vector<size_t> allowed;
      for (size_t i = 0; i < mask.size(); ++i) {
        if (mask[i]) allowed.push_back(i);
      }
      if (allowed.empty()) break;
      const size_t pick = allowed[rng() % allowed.size()];
      ASSERT_TRUE(m.accept(pieces[pick]));
      text += pieces[pick];
    }
  }
}

TEST(TokenMask, EqualsBruteForceOnJson) {
  compare_along_walks(parse_gbnf(json_gbnf(false)), hand_made_vocabulary(), 30, 60, 1);
}

TEST(TokenMask, EqualsBruteForceOnUnicodeClasses) {
  auto g = parse_gbnf("root ::= ( [a-z\\u00e9] | [\\u20ac-\\u20af] \" \" | \"\\U0001F600\" | \"\\\\\" [nu] )* \"!\"");
  compare_along_walks(g, hand_made_vocabulary(), 30, 40, 2);
}

TEST(TokenMask, EmptyAndDuplicatePieces) {
  const std::vector<std::string> pieces = {"", "a", "a", "", "ab", "b"};
  const TokenTrie trie(pieces);
  Matcher m(parse_gbnf("root ::= \"a\" \"b\"?"));
  std::vector<uint8_t> mask;
  m.allowed_tokens(trie, mask);
  EXPECT_EQ(mask, (std::vector<uint8_t>{0, 1, 1, 0, 1, 0}));
  ASSERT_TRUE(m.accept("a"));
  m.allowed_tokens(trie, mask);
  EXPECT_EQ(mask, (std::vector<uint8_t>{0, 0, 0, 0, 0, 1}));
}

TEST(TokenMask, EqualsBruteForceOnLlamaVocabulary) {
  const std::string path = PARLEY_SHARED_DIR "/tokenizers/ggml-vocab-llama-spm.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const Tokenizer tokenizer = Tokenizer::from_gguf(path);
  std::vector<std::string> pieces;
  for (int32_t id = 0; id < static_cast<int32_t>(tokenizer.vocab().tokens.size()); ++id) {
    pieces.push_back(tokenizer.token_to_piece(id));
  }
  compare_along_walks(parse_gbnf(json_gbnf(false)), pieces, 3, 25, 3);
}

}  // namespace
}  // namespace parley::grammar
