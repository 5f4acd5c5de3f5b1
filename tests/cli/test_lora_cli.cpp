// LoRA adapters from the command line: mkadapter, --lora on generate / eval /
// bench, lora merge (the merged model answers as the adapter at run time),
// and an adapter for another base refused with the tensor's name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace parley::lora_cli_test {
namespace {

using test::run;

const std::string kBase = PARLEY_SOURCE_DIR "/models/stories260K.gguf";

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("parley-lora-cli-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

std::string ids(const std::string& args) {
  const auto r = run("generate " + args + " -p 'Once upon a time' -n 24 --ids --temp 0");
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

TEST(LoraCli, RuntimeAdapterAnswersAsTheMergedModel) {
  const std::string adapter = temp("a.gguf"), merged = temp("merged.gguf"), half = temp("half.gguf");
  const auto mk = run("mkadapter " + kBase + " " + adapter + " --rank 8 --strength 2 --seed 3");
  ASSERT_EQ(mk.status, 0) << mk.err;
  ASSERT_EQ(run("lora merge " + kBase + " " + adapter + " " + merged).status, 0);
  ASSERT_EQ(run("lora merge " + kBase + " " + adapter + " " + half + " --scale 0.5").status, 0);
  const std::string base = ids("-m " + kBase);
  const std::string adapted = ids("-m " + kBase + " --lora " + adapter);
  EXPECT_NE(adapted, base);
  EXPECT_EQ(adapted, ids("-m " + merged));
  EXPECT_EQ(ids("-m " + kBase + " --lora " + adapter + ":0.5"), ids("-m " + half));
  EXPECT_EQ(ids("-m " + kBase + " --lora " + adapter + ":0"), base);
  const std::string text = PARLEY_SOURCE_DIR "/tests/data/story.txt";
  const auto ppl = run("eval -m " + kBase + " --lora " + adapter + " --perplexity " + text + " --json");
  const auto ppl_merged = run("eval -m " + merged + " --perplexity " + text + " --json");
  ASSERT_EQ(ppl.status, 0) << ppl.err;
  const double got = nlohmann::json::parse(ppl.out)["perplexity"].get<double>();
  EXPECT_NEAR(got, nlohmann::json::parse(ppl_merged.out)["perplexity"].get<double>(), got * 1e-5);
  const auto bench = run("bench -m " + kBase + " --lora " + adapter +
                         " --prompt-tokens 32 --decode-tokens 8 --batch 2 --batch-steps 2 --reps 1 --bandwidth-mib 8 --json");
  ASSERT_EQ(bench.status, 0) << bench.err;
  EXPECT_EQ(nlohmann::json::parse(bench.out)["lora"]["max_rank"].get<int>(), 8);
  for (const auto& p : {adapter, merged, half}) std::filesystem::remove(p);
}

TEST(LoraCli, AdapterForAnotherBaseIsRefused) {
  const std::string other = temp("other.gguf"), adapter = temp("b.gguf");
  ASSERT_EQ(run("mkmodel --dim 64 --layers 1 --heads 4 --ffn 128 -o " + other).status, 0);
  ASSERT_EQ(run("mkadapter " + other + " " + adapter + " --targets ffn_up").status, 0);
  const auto r = run("generate -m " + kBase + " --lora " + adapter + " -p hi -n 2");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("blk.0.ffn_up.weight"), std::string::npos) << r.err;
  const auto t = run("mkadapter " + kBase + " " + adapter + " --targets attn_x");
  EXPECT_NE(t.status, 0);
  EXPECT_NE(t.err.find("attn_x"), std::string::npos) << t.err;
  for (const auto& p : {other, adapter}) std::filesystem::remove(p);
}

}  // namespace
}  // namespace parley::lora_cli_test
