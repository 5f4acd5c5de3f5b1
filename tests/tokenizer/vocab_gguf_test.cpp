// load_vocab on GGUF files written here (defaults, errors) and on real ones.
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "test_data.h"
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

// load_written must throw an Error naming the file and containing `expect`.
void expect_error(const std::string& model, const std::vector<std::pair<std::string, Value>>& extra,
                  const std::string& expect) {
  try {
    load_written(model, extra);
    ADD_FAILURE() << "no error; expected one about \"" << expect << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(".gguf"), std::string::npos) << e.what();
  }
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

}  // namespace
}  // namespace parley
