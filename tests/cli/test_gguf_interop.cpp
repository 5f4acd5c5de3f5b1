// Files from Parley's GGUF writer, read by an independent implementation
// (Hugging Face's @huggingface/gguf, via node): both must see the same file.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "gguf/gguf.h"
#include "model/mkmodel.h"

namespace parley {
namespace {

const std::string kSource = PARLEY_SOURCE_DIR;

std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 65536> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  pclose(p);
  return out;
}

bool node_reader_available() {
  return std::filesystem::exists(kSource + "/node_modules/@huggingface/gguf/package.json") &&
         std::system("node --version >/dev/null 2>&1") == 0;
}

// The reader sees every key, tensor name, shape (3-D expert tensors
// included), type and offset of the file mkmodel writes from `s`.
void expect_reader_agrees(const MkModelSpec& s, const std::string& arch) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("parley-interop-" + std::to_string(::getpid()) + ".gguf")).string();
  write_random_model(s, path);
  const auto theirs = nlohmann::json::parse(
      capture("cd " + kSource + " && node tests/interop/gguf_dump.mjs " + path));
  const auto ours = gguf::File::open(path);
  EXPECT_EQ(theirs["version"], 3);
  EXPECT_EQ(theirs["architecture"], arch);
  EXPECT_EQ(theirs["data_offset"].get<uint64_t>(), ours->data_offset());
  EXPECT_EQ(theirs["n_tokens"], 512);
  std::vector<std::string> keys;
  for (const auto& [k, v] : ours->metadata()) keys.push_back(k);
  EXPECT_EQ(theirs["keys"].get<std::vector<std::string>>(), keys);
  ASSERT_EQ(theirs["tensors"].size(), ours->tensors().size());
  for (size_t i = 0; i < ours->tensors().size(); ++i) {
    const auto& t = ours->tensors()[i];
    const auto& j = theirs["tensors"][i];
    EXPECT_EQ(j["name"], t.name);
    EXPECT_EQ(j["dims"].get<std::vector<uint64_t>>(), t.dims);
    EXPECT_EQ(j["type"].get<uint32_t>(), uint32_t(t.type));
    EXPECT_EQ(j["offset"].get<uint64_t>(), t.offset);
  }
  std::filesystem::remove(path);
}

MkModelSpec small_spec(const char* arch, DType type) {
  MkModelSpec s;
  s.arch = arch;
  s.dim = 256;
  s.n_layers = 2;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.ffn_dim = 512;
  s.type = type;
  s.vocab_from = kSource + "/models/stories260K.gguf";
  return s;
}

void require_node_reader() {
  if (node_reader_available()) return;
  if (std::getenv("PARLEY_REQUIRE_NODE")) FAIL() << "node or node_modules/@huggingface/gguf missing (npm ci)";
  GTEST_SKIP() << "node / @huggingface/gguf not installed (scripts/test installs them)";
}

TEST(GgufInterop, IndependentReaderSeesWhatWeWrote) {
  require_node_reader();
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFailure()) return;
  for (DType type : {DType::F32, DType::F16, DType::Q8_0, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q6_K,
                     DType::IQ4_NL, DType::IQ4_XS}) {
    SCOPED_TRACE(dtype_name(type));
    expect_reader_agrees(small_spec("qwen2", type), "qwen2");
  }
}

// The families with their own tensors: Gemma's post-norms, Phi-3's fused QKV and gate/up.
TEST(GgufInterop, IndependentReaderSeesEachFamily) {
  require_node_reader();
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFailure()) return;
  for (const char* arch : {"gemma2", "gemma3", "phi3", "qwen3moe", "olmoe"}) {
    SCOPED_TRACE(arch);
    expect_reader_agrees(small_spec(arch, DType::Q8_0), arch);
  }
}

TEST(GgufInterop, IndependentReaderSeesExpertTensors) {
  require_node_reader();
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFailure()) return;
  auto s = small_spec("qwen2moe", DType::Q8_0);
  s.n_experts = 4;
  s.shared_expert_ffn = 256;
  expect_reader_agrees(s, "qwen2moe");
}

}  // namespace
}  // namespace parley
