// parley convert, quantize and eval on the real stories260K model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace {

using parley::test::kShared;
using parley::test::run;

const std::string kText = std::string(PARLEY_SOURCE_DIR) + "/tests/data/story.txt";

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("parley-tools-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

bool have_checkpoint() { return std::filesystem::exists(kShared + "/models/stories260K.bin"); }

// stories260K.bin + tok512.bin converted once for the whole suite.
class ModelTools : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!have_checkpoint()) return;
    const auto r = run("convert -m " + kShared + "/models/stories260K.bin -z " + kShared +
                       "/models/tok512.bin -o " + converted());
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { std::filesystem::remove(converted()); }
  void SetUp() override {
    if (!have_checkpoint()) GTEST_SKIP() << "../shared/models/stories260K.bin not present";
  }
  static std::string converted() { return temp_path("converted.gguf"); }

  static nlohmann::json compare(const std::string& type) {
    const std::string out = temp_path(type + ".gguf");
    const auto q = run("quantize " + converted() + " " + out + " " + type);
    EXPECT_EQ(q.status, 0) << q.err;
    const auto r = run("eval --compare " + converted() + " " + out + " --text " + kText + " --max-tokens 600 --json");
    std::filesystem::remove(out);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
};

TEST_F(ModelTools, ConvertedCheckpointGeneratesTheSameTokens) {
  const std::string args = " -p 'Once upon a time' --temp 0 --ids -n 60";
  const auto a = run("generate -m " + converted() + args);
  const auto b = run("generate -m " + kShared + "/models/stories260K.bin -z " + kShared + "/models/tok512.bin" + args);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  const auto info = run("info " + converted());
  EXPECT_NE(info.out.find("sentencepiece, 512 tokens"), std::string::npos) << info.out;
}

TEST_F(ModelTools, Q8IsCloseAndQ4FartherFromTheReference) {
  const auto q8 = compare("q8_0");
  const auto q4 = compare("q4_0");
  EXPECT_EQ(q8["tokens"].get<int>(), 599);
  EXPECT_LT(q8["perplexity_change_pct"].get<double>(), 2.0);  // the INT8 quality bar
  EXPECT_GT(q8["top1_agreement"].get<double>(), 0.95);
  EXPECT_GT(q8["cosine_mean"].get<double>(), 0.999);
  EXPECT_GT(q4["kl_mean"].get<double>(), q8["kl_mean"].get<double>());
  EXPECT_GT(q4["perplexity_change_pct"].get<double>(), q8["perplexity_change_pct"].get<double>());
}

TEST_F(ModelTools, IdenticalModelsAgreeExactly) {
  const auto r = run("eval --compare " + converted() + " " + converted() + " --text " + kText + " --max-tokens 600 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kl_mean"].get<double>(), 0.0);
  EXPECT_EQ(j["top1_agreement"].get<double>(), 1.0);
  const auto p = run("eval -m " + converted() + " --perplexity " + kText + " --max-tokens 600 --json");
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(p.out)["perplexity"].get<double>(), j["ref"]["perplexity"].get<double>());
  // A story model finds a children's story far more likely than uniform guessing (512 tokens).
  EXPECT_LT(j["ref"]["perplexity"].get<double>(), 20.0);
}

TEST_F(ModelTools, QuantizedFileIsSmallerAndKeepsMetadata) {
  const std::string out = temp_path("q4km.gguf");
  const auto q = run("quantize " + converted() + " " + out + " q4_k_m");
  ASSERT_EQ(q.status, 0) << q.err;
  EXPECT_NE(q.err.find("fallback type"), std::string::npos) << "64-wide rows cannot hold 256-wide K-quant blocks";
  EXPECT_LT(std::filesystem::file_size(out), std::filesystem::file_size(converted()) / 3);
  const auto info = run("info " + out);
  EXPECT_NE(info.out.find("general.file_type"), std::string::npos);
  EXPECT_NE(info.out.find("tokenizer.ggml.tokens"), std::string::npos);
  const auto g = run("generate -m " + out + " -p 'Once' --temp 0 -n 10");
  EXPECT_EQ(g.status, 0) << g.err;
  std::filesystem::remove(out);
}

TEST_F(ModelTools, UnknownTypeIsAnError) {
  const auto r = run("quantize " + converted() + " " + temp_path("x.gguf") + " q3_x");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("unknown type"), std::string::npos) << r.err;
}

}  // namespace
