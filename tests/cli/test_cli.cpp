// The parley binary end to end, run as a subprocess.
#include <gtest/gtest.h>

#include "cli_run.h"
#include "gguf/gguf.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using parley::test::kBin;
using parley::test::kShared;
using parley::test::run;

std::string join(const std::vector<int>& ids, size_t n) {
  std::string s;
  for (size_t i = 0; i < n && i < ids.size(); ++i) s += (i ? " " : "") + std::to_string(ids[i]);
  return s;
}

nlohmann::json first_golden() {
  std::ifstream in(kShared + "/golden/stories260K-greedy.jsonl");
  std::string line;
  std::getline(in, line);
  return nlohmann::json::parse(line);
}

bool have_shared() { return std::filesystem::exists(kShared + "/golden/stories260K-greedy.jsonl"); }

TEST(Cli, GenerateLlama2cIdsMatchRunC) {
  if (!have_shared()) GTEST_SKIP() << "../shared not present";
  const auto g = first_golden();
  const std::vector<int> want = g["generated_ids"];
  const auto r = run("generate -m " + kShared + "/models/stories260K.bin -z " + kShared +
                     "/models/tok512.bin -p 'Once upon a time' --temp 0 --ids -n " + std::to_string(want.size()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, join(want, want.size()) + "\n");
  EXPECT_NE(r.err.find("tok/s"), std::string::npos) << r.err;
}

TEST(Cli, EchoedTextMatchesRunCText) {
  if (!have_shared()) GTEST_SKIP() << "../shared not present";
  std::ifstream in(kShared + "/golden/stories260K-greedy.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto g = nlohmann::json::parse(line);
    const std::string prompt = g["prompt"];
    const auto r = run("generate -m " + kShared + "/models/stories260K.bin -z " + kShared +
                       "/models/tok512.bin --temp 0 --echo -n " + std::to_string(g["generated_ids"].size()) +
                       " -p '" + prompt + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, g["text"].get<std::string>() + "\n") << prompt;
  }
}

TEST(Cli, GenerateDefaultsToTheBundledModel) {
  if (!have_shared()) GTEST_SKIP() << "../shared not present";
  const std::vector<int> want = first_golden()["generated_ids"];
  const auto r = run("generate -p 'Once upon a time' --temp 0 --ids -n 20");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, join(want, 20) + "\n");
}

TEST(Cli, StdoutCarriesOnlyTheContinuationUnlessEcho) {
  const auto plain = run("generate -p 'Once upon a time' --temp 0 -n 30");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out.find("Once upon a time"), std::string::npos) << plain.out;
  EXPECT_GT(plain.out.size(), 30u);
  const auto echo = run("generate -p 'Once upon a time' --temp 0 -n 30 --echo");
  ASSERT_EQ(echo.status, 0) << echo.err;
  EXPECT_EQ(echo.out, "Once upon a time" + plain.out);
}

TEST(Cli, SeededSamplingIsReproducible) {
  const auto a = run("generate -p 'Lily' --temp 1 --seed 42 -n 40 --ids");
  const auto b = run("generate -p 'Lily' --temp 1 --seed 42 -n 40 --ids");
  const auto c = run("generate -p 'Lily' --temp 1 --seed 43 -n 40 --ids");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
}

// --spec changes the speed, not the text; the oracle drafter reads the ids
// `generate --ids` printed.
TEST(Cli, GenerateWithSpeculationGivesTheSameTokens) {
  const std::string gen = "generate -p 'Lily saw a ball. Lily saw a ball. Lily' --temp 0 -n 40 --ids";
  const auto plain = run(gen);
  ASSERT_EQ(plain.status, 0) << plain.err;
  const auto ngram = run(gen + " --spec ngram --spec-tokens 4 --spec-fixed");
  ASSERT_EQ(ngram.status, 0) << ngram.err;
  EXPECT_EQ(ngram.out, plain.out);
  EXPECT_NE(ngram.err.find("speculation: "), std::string::npos) << ngram.err;
  const auto path = (std::filesystem::temp_directory_path() / ("parley-oracle-" + std::to_string(::getpid()))).string();
  std::ofstream(path) << plain.out;
  const auto oracle = run(gen + " --spec-oracle " + path + " --spec-tokens 8 --spec-fixed");
  std::filesystem::remove(path);
  ASSERT_EQ(oracle.status, 0) << oracle.err;
  EXPECT_EQ(oracle.out, plain.out);
  EXPECT_NE(oracle.err.find("(100%)"), std::string::npos) << oracle.err;
  // A draft model (here the bundled one drafting for itself) implies --spec draft.
  const auto draft = run(gen + " --draft-model " PARLEY_SOURCE_DIR "/models/stories260K.gguf --spec-tokens 4 --spec-fixed");
  ASSERT_EQ(draft.status, 0) << draft.err;
  EXPECT_EQ(draft.out, plain.out);
  EXPECT_NE(draft.err.find("speculation: "), std::string::npos) << draft.err;
  for (const char* flags : {" --spec bogus", " --spec draft", " --spec ngram --draft-model x.gguf"}) {
    const auto bad = run(gen + flags);
    EXPECT_NE(bad.status, 0) << flags;
    EXPECT_NE(bad.err.find("--spec"), std::string::npos) << bad.err;
  }
}

TEST(Cli, Tokenize) {
  const auto r = run("tokenize 'Once upon a time'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1 403 407 261 378\n");
  const auto nobos = run("tokenize --no-bos 'Once upon a time'");
  EXPECT_EQ(nobos.out, "403 407 261 378\n");
}

TEST(Cli, InfoShowsMetadataAndTensors) {
  const auto r = run("info");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("architecture: llama"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blk.4.ffn_down.weight"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tokenizer.ggml.tokens"), std::string::npos) << r.out;
}

TEST(Cli, ChatAnswersEachTurn) {
  const auto r = run("chat --temp 0 -n 20", "Hello there\nTell me a story\n/quit\n");
  ASSERT_EQ(r.status, 0) << r.err;
  // Two answers, each reported with its prefill count; the second turn re-uses the cache.
  size_t turns = 0;
  for (size_t p = 0; (p = r.err.find("prompt tokens prefilled", p)) != std::string::npos; ++p) ++turns;
  EXPECT_EQ(turns, 2u) << r.err;
}

TEST(Cli, MkmodelThenGenerate) {
  const std::string path = (std::filesystem::temp_directory_path() / ("parley-cli-mk-" + std::to_string(::getpid()) + ".gguf")).string();
  const auto mk = run("mkmodel --arch qwen2 --dim 64 --layers 2 --heads 4 --kv-heads 2 --type q8_0 -o " + path);
  ASSERT_EQ(mk.status, 0) << mk.err;
  const auto info = run("info " + path);
  EXPECT_NE(info.out.find("architecture: qwen2"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("Q8_0"), std::string::npos) << info.out;
  const auto gen = run("generate -m " + path + " -p 'hi' -n 5 --ids --temp 0");
  ASSERT_EQ(gen.status, 0) << gen.err;
  std::filesystem::remove(path);
}

// Prefill's speed per parameter counts the weights a prompt token multiplies:
// the bundled model's 5 blocks of q, k, v, o (64x64, 32x64, 32x64, 64x64) and
// gate, up, down (172x64 each), not its tied embedding/output table.
TEST(Cli, BenchCountsThePrefillWeights) {
  const auto bench = run("bench -m " PARLEY_SOURCE_DIR "/models/stories260K.gguf --prompt-tokens 16 --decode-tokens 4 "
                         "--batch 1 --batch-steps 2 --reps 1 --bandwidth-mib 8 --json");
  ASSERT_EQ(bench.status, 0) << bench.err;
  const auto j = nlohmann::json::parse(bench.out);
  EXPECT_EQ(j["model"]["prefill_params_per_token"].get<uint64_t>(), 5u * (2 * 4096 + 2 * 2048 + 3 * 172 * 64));
  const auto& p = j["prefill"][0];
  EXPECT_DOUBLE_EQ(p["weight_gmacs"].get<double>(), p["tok_s"].get<double>() * 226560 / 1e9);
}

// Each mixture-of-experts family from the command line through quantize,
// info and generate; experts used beyond the experts is refused.
TEST(Cli, MkmodelMixtureOfExperts) {
  const std::string base = (std::filesystem::temp_directory_path() / ("parley-cli-moe-" + std::to_string(::getpid()))).string();
  for (const char* arch : {"mixtral", "qwen2moe", "qwen3moe", "olmoe"}) {
    SCOPED_TRACE(arch);
    const auto mk = run(std::string("mkmodel --arch ") + arch + " --dim 64 --layers 2 --heads 4 --ffn 32 --experts 4 " +
                        "--experts-used 2 --shared-expert-ffn 64 -o " + base + ".gguf");
    ASSERT_EQ(mk.status, 0) << mk.err;
    const auto q = run("quantize " + base + ".gguf " + base + "-q8.gguf q8_0");
    ASSERT_EQ(q.status, 0) << q.err;
    const auto info = run("info " + base + "-q8.gguf");
    EXPECT_NE(info.out.find("mixture of experts: 4 experts of ffn 32, 2 per token"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("ffn_gate_exps.weight"), std::string::npos) << info.out;
    const auto gen = run("generate -m " + base + "-q8.gguf -p 'hi' -n 5 --ids --temp 0");
    ASSERT_EQ(gen.status, 0) << gen.err;
  }
  // bench counts the experts a batched step runs: a token's k exactly, a
  // batch's between k and all, and the bytes and bound follow from them.
  const auto bench = run("bench -m " + base + "-q8.gguf --prompt-tokens 8 --decode-tokens 4 --batch 1 8 "
                         "--batch-steps 4 --reps 1 --bandwidth-mib 8 --json");
  ASSERT_EQ(bench.status, 0) << bench.err;
  const auto j = nlohmann::json::parse(bench.out);
  const auto& one = j["decode"][0];
  const auto& eight = j["decode"][1];
  EXPECT_EQ(one["experts_per_block"].get<double>(), 2.0);
  EXPECT_EQ(one["bytes_per_step"].get<double>(), j["model"]["bytes_per_token"].get<double>());
  EXPECT_GE(eight["experts_per_block"].get<double>(), 2.0);
  EXPECT_LE(eight["experts_per_block"].get<double>(), 4.0);
  EXPECT_GE(eight["bytes_per_step"].get<double>(), one["bytes_per_step"].get<double>());
  EXPECT_NEAR(eight["bound_tok_s"].get<double>(),
              8 * j["machine"]["bandwidth_gbs"].get<double>() * 1e9 / eight["bytes_per_step"].get<double>(), 1e-6);
  const auto bad = run("mkmodel --arch qwen3moe --experts 4 --experts-used 5 -o " + base + ".gguf");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("experts used (5) must be at most the experts (4)"), std::string::npos) << bad.err;
  std::filesystem::remove(base + ".gguf");
  std::filesystem::remove(base + "-q8.gguf");
}

// --layers cuts a preset down, keeping its other shapes; every family generates.
TEST(Cli, MkmodelPresetCutDownByLayers) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("parley-cli-cut-" + std::to_string(::getpid()) + ".gguf")).string();
  const auto mk = run("mkmodel --preset llama-110m --layers 1 --type q4_0 -o " + path);
  ASSERT_EQ(mk.status, 0) << mk.err;
  const auto info = run("info " + path);
  EXPECT_NE(info.out.find("dim 768, layers 1, heads 12"), std::string::npos) << info.out;
  for (const char* arch : {"gemma2", "gemma3", "phi3"}) {
    const auto small =
        run(std::string("mkmodel --arch ") + arch + " --dim 64 --layers 2 --heads 4 --type q8_0 -o " + path);
    ASSERT_EQ(small.status, 0) << small.err;
    const auto gen = run("generate -m " + path + " -p 'hi' -n 5 --ids --temp 0");
    EXPECT_EQ(gen.status, 0) << arch << ": " << gen.err;
  }
  std::filesystem::remove(path);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Cli, MkmodelWritesABundledChatTemplate) {
  const std::string path = (std::filesystem::temp_directory_path() / ("parley-cli-tmpl-" + std::to_string(::getpid()) + ".gguf")).string();
  const auto mk = run("mkmodel --dim 32 --layers 1 --heads 2 --chat-template hermes -o " + path);
  ASSERT_EQ(mk.status, 0) << mk.err;
  std::string hermes = slurp(std::string(PARLEY_SOURCE_DIR) + "/tests/chat/data/templates/qwen2.5-7b-instruct.jinja");
  if (hermes.ends_with("\n")) hermes.pop_back();
  EXPECT_EQ(parley::gguf::File::open(path)->find("tokenizer.chat_template")->as_string(), hermes);
  // It renders tools, though the bundled vocabulary has none of its special tokens.
  const std::string msgs = path + ".msgs.json", tools = path + ".tools.json";
  std::ofstream(msgs) << R"([{"role": "user", "content": "Weather in Paris?"}])";
  std::ofstream(tools) << R"([{"type": "function", "function": {"name": "get_weather", "parameters": {}}}])";
  const auto shown = run("template -m " + path + " --messages " + msgs + " --tools " + tools);
  EXPECT_EQ(shown.status, 0) << shown.err;
  EXPECT_NE(shown.out.find("<tools>\n{\"type\": \"function\""), std::string::npos) << shown.out;
  const auto bad = run("mkmodel --chat-template no-such-template -o " + path);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("no-such-template"), std::string::npos) << bad.err;
  for (const std::string& p : {path, msgs, tools}) std::filesystem::remove(p);
}

TEST(Cli, BadModelFileIsACleanError) {
  const std::string path = (std::filesystem::temp_directory_path() / ("parley-cli-bad-" + std::to_string(::getpid()) + ".gguf")).string();
  std::ofstream(path) << "GGUF\x03garbage";
  const auto r = run("generate -m " + path + " -p hi");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  std::filesystem::remove(path);
}

}  // namespace

namespace parley {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Cli, TemplatePrintsWhatTheTemplateRenders) {
  const std::string tmpl = write_temp("parley_cli.jinja",
                                      "{{ bos_token }}{% for m in messages %}[{{ m.role }}|{{ m.content }}]{% endfor %}"
                                      "{% if tools %}T={{ tools | length }}{% endif %}{% if add_generation_prompt %}>{% endif %}");
  const std::string msgs = write_temp("parley_cli_msgs.json", R"([{"role": "user", "content": "Hi"}])");
  const std::string tools = write_temp("parley_cli_tools.json", R"([{"type": "function"}, {"type": "function"}])");
  auto r = test::run("template --chat-template " + tmpl + " --messages " + msgs);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "<s>[user|Hi]>");  // the bundled model's BOS text
  r = test::run("template --chat-template " + tmpl + " --messages " + msgs + " --tools " + tools +
                " --bos-token '' --no-generation-prompt");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "[user|Hi]T=2");
  r = test::run("template --messages " + msgs);  // the bundled model has no template
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--chat-template"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace parley
