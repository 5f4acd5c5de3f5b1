// llama2.c's tokenizer.bin: loading, malformed files, and encoding the golden
// prompts exactly as llama2.c's run.c does (BOS + encode(prompt)).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>

#include "gguf/gguf.h"
#include "test_data.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace parley {
namespace {

using test::shared_path;

const std::string kTok512 = shared_path("models/tok512.bin");
const std::string kGolden = shared_path("golden/stories260K-greedy.jsonl");

struct GoldenRun {
  std::string prompt, text;
  std::vector<int32_t> prompt_ids, generated_ids;
};

std::vector<GoldenRun> golden_runs() {
  std::vector<GoldenRun> runs;
  std::ifstream in(kGolden);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    runs.push_back({j.at("prompt"), j.at("text"), j.at("prompt_ids"), j.at("generated_ids")});
  }
  return runs;
}

TEST(Llama2cVocab, LoadsTok512) {
  SKIP_IF_MISSING(kTok512);
  const Vocab v = load_llama2c_vocab(kTok512, 512);
  ASSERT_EQ(v.size(), 512);
  EXPECT_EQ(v.kind, Vocab::Kind::Spm);
  EXPECT_EQ(v.unk, 0);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.tokens[1], "<s>");
  EXPECT_EQ(v.types[1], TokenType::Control);
  EXPECT_EQ(v.types[0], TokenType::Unknown);
  EXPECT_EQ(v.tokens[3 + 0x0A], "<0x0A>");
  EXPECT_EQ(v.types[3 + 0x0A], TokenType::Byte);
  EXPECT_EQ(v.tokens[259], "\xE2\x96\x81t");  // " t" with the space as U+2581
  EXPECT_EQ(v.types[259], TokenType::Normal);
  EXPECT_EQ(v.scores[260], -1.0f);
  EXPECT_TRUE(v.add_bos);
  EXPECT_TRUE(v.add_space_prefix);
}

TEST(Llama2cVocab, EncodesGoldenPromptsLikeRunC) {
  SKIP_IF_MISSING(kTok512);
  SKIP_IF_MISSING(kGolden);
  const Tokenizer tok(load_llama2c_vocab(kTok512, 512));
  const std::vector<GoldenRun> runs = golden_runs();
  ASSERT_FALSE(runs.empty());
  for (const GoldenRun& r : runs) {
    EXPECT_EQ(tok.encode(r.prompt, /*add_special=*/true, /*parse_special=*/false), r.prompt_ids) << r.prompt;
  }
}

TEST(Llama2cVocab, DecodesGoldenTextLikeRunC) {
  SKIP_IF_MISSING(kTok512);
  SKIP_IF_MISSING(kGolden);
  const Tokenizer tok(load_llama2c_vocab(kTok512, 512));
  for (const GoldenRun& r : golden_runs()) {
    std::vector<int32_t> ids = r.prompt_ids;
    ids.insert(ids.end(), r.generated_ids.begin(), r.generated_ids.end());
    EXPECT_EQ(tok.decode(ids), r.text) << r.prompt;
  }
}

TEST(Llama2cVocab, Stories260KGgufVocabMatchesTok512) {
  const std::string gguf_path = std::string(PARLEY_SOURCE_DIR) + "/models/stories260K.gguf";
  SKIP_IF_MISSING(kTok512);
  SKIP_IF_MISSING(gguf_path);
  const Tokenizer bin(load_llama2c_vocab(kTok512, 512));
  const Tokenizer gguf(load_vocab(*gguf::File::open(gguf_path)));
  EXPECT_EQ(gguf.vocab().tokens, bin.vocab().tokens);
  EXPECT_EQ(gguf.vocab().types, bin.vocab().types);
  EXPECT_EQ(gguf.vocab().scores, bin.vocab().scores);
  std::vector<std::string> texts = {"Once upon a time", "Lily and Tom went to the park", "",
                                    "  two  spaces\nand a line\t tab", "caf\xC3\xA9 \xE2\x9C\x85 <0x0A> </s>"};
  if (std::filesystem::exists(kGolden)) {
    for (const GoldenRun& r : golden_runs()) texts.push_back(r.text);
  }
  for (const std::string& t : texts) {
    EXPECT_EQ(gguf.encode(t, true, false), bin.encode(t, true, false)) << t;
    EXPECT_EQ(gguf.encode(t, true, true), bin.encode(t, true, true)) << t;
  }
}

// A tokenizer.bin with max_token_length 8 and the given tokens.
std::string tokenizer_bin(const std::vector<std::pair<float, std::string>>& tokens, int32_t max_len = 8) {
  std::string out(reinterpret_cast<const char*>(&max_len), 4);
  for (const auto& [score, text] : tokens) {
    const int32_t len = int32_t(text.size());
    out.append(reinterpret_cast<const char*>(&score), 4);
    out.append(reinterpret_cast<const char*>(&len), 4);
    out += text;
  }
  return out;
}

// load_llama2c_vocab(bytes) must throw an Error whose message names the file and contains `expect`.
void expect_load_error(const std::string& bytes, int32_t vocab_size, const std::string& expect) {
  const std::string path = test::temp_path(".bin");
  test::write_file(path, bytes);
  try {
    load_llama2c_vocab(path, vocab_size);
    ADD_FAILURE() << "no error for a file expecting \"" << expect << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(Llama2cVocab, SmallFileLoads) {
  const std::string path = test::temp_path(".bin");
  test::write_file(path, tokenizer_bin({{0, "<unk>"}, {0, "\n<s>\n"}, {0, "\n</s>\n"}, {-1, " a"}}));
  const Vocab v = load_llama2c_vocab(path, 4);
  std::filesystem::remove(path);
  EXPECT_EQ(v.tokens, (std::vector<std::string>{"<unk>", "<s>", "</s>", "\xE2\x96\x81" "a"}));
  EXPECT_EQ(v.bos, 1);
}

TEST(Llama2cVocab, MalformedFilesThrow) {
  const auto good = tokenizer_bin({{0, "<unk>"}, {0, "\n<s>\n"}, {0, "\n</s>\n"}, {-1, " a"}});
  expect_load_error("", 4, "max_token_length");
  expect_load_error(good.substr(0, 2), 4, "truncated");
  expect_load_error(good, 5, "score of token 4");                       // fewer tokens than promised
  expect_load_error(good.substr(0, good.size() - 1), 4, "text of token 3");  // cut inside a token
  expect_load_error(tokenizer_bin({{0, "a"}}, 0), 1, "max_token_length 0");
  expect_load_error(tokenizer_bin({{0, "a"}}, 1 << 30), 1, "max_token_length");
  expect_load_error(tokenizer_bin({{0, "abcdefghij"}}), 1, "token 0 has length 10");
  expect_load_error(tokenizer_bin({{NAN, "a"}}), 1, "not finite");
  expect_load_error(good, 0, "vocabulary size 0");
  std::string negative = tokenizer_bin({{0, "a"}});
  const int32_t minus_one = -1;
  std::memcpy(&negative[8], &minus_one, 4);
  expect_load_error(negative, 1, "length -1");
  EXPECT_THROW(load_llama2c_vocab(test::temp_path(".missing"), 4), Error);
}

}  // namespace
}  // namespace parley
