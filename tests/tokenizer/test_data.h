#pragma once
// Helpers shared by the tokenizer and chat tests: test-data files and small vocabularies.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/vocab.h"

namespace parley::test {

inline std::string shared_path(const std::string& rel) { return std::string(PARLEY_SHARED_DIR) + "/" + rel; }

#define SKIP_IF_MISSING(path)                                                           \
  do {                                                                                  \
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "test data not found: " << (path); \
  } while (0)

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A scratch file path unique to the running test.
inline std::string temp_path(const std::string& suffix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return (std::filesystem::temp_directory_path() /
          ("parley_tok_" + std::string(info->test_suite_name()) + "_" + info->name() + suffix))
      .string();
}

// One case of llama.cpp's tokenizer test vectors (ggml-vocab-NAME.gguf.inp/.out).
struct VectorCase {
  std::string text;
  std::vector<int32_t> ids;
};

// The .inp strings are separated by "\n__ggml_vocab_test__\n" (the last one
// ends with it too); the .out file has one line of ids per string.
inline std::vector<VectorCase> load_vectors(const std::string& gguf_path) {
  const std::string inp = read_file(gguf_path + ".inp");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<VectorCase> cases;
  for (size_t pos = 0, next; (next = inp.find(sep, pos)) != std::string::npos; pos = next + sep.size()) {
    cases.push_back({inp.substr(pos, next - pos), {}});
  }
  std::ifstream out(gguf_path + ".out");
  std::string line;
  size_t i = 0;
  for (; std::getline(out, line); ++i) {
    if (i >= cases.size()) {
      ADD_FAILURE() << "more .out lines than .inp strings in " << gguf_path;
      break;
    }
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) cases[i].ids.push_back(id);
  }
  EXPECT_EQ(i, cases.size()) << "the .out line count differs from the .inp string count of " << gguf_path;
  return cases;
}

struct TokenSpec {
  std::string text;
  float score = 0;
  TokenType type = TokenType::Normal;
};

// An SPM vocabulary with no special ids set.
inline Vocab make_spm_vocab(const std::vector<TokenSpec>& specs) {
  Vocab v;
  v.kind = Vocab::Kind::Spm;
  for (const TokenSpec& s : specs) {
    v.tokens.push_back(s.text);
    v.scores.push_back(s.score);
    v.types.push_back(s.type);
  }
  return v;
}

}  // namespace parley::test
