// Loading real files, and clean errors for broken ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "gguf/writer.h"
#include "model/arch.h"
#include "model/mkmodel.h"
#include "model/model.h"
#include "util/error.h"
#include "model_test_util.h"

namespace parley {
namespace {

using testing::kShared;
using testing::kBundled;
using testing::temp_path;

std::vector<char> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_all(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

TEST(ModelLoad, BundledGguf) {
  auto m = Model::load(kBundled);
  const auto& c = m->config();
  EXPECT_EQ(c.arch, "llama");
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.context_length, 512);  // as trained (parley convert from the llama2.c checkpoint)
  EXPECT_TRUE(c.tied_output);
  EXPECT_EQ(m->tokenizer().vocab().size(), 512);
}

TEST(ModelLoad, Llama2cCheckpoint) {
  const std::string bin = kShared + "/models/stories260K.bin";
  if (!std::filesystem::exists(bin)) GTEST_SKIP() << "../shared/models/stories260K.bin not present";
  auto m = Model::load(bin, kShared + "/models/tok512.bin");
  const auto& c = m->config();
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.ffn_dim, 172);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_TRUE(c.tied_output);
}

// The tokenizer alone: the same as the loaded model's, from GGUF metadata or
// from a llama2.c checkpoint's header and tokenizer.bin.
TEST(ModelLoad, TokenizerAloneMatchesTheModels) {
  const Tokenizer bundled = Model::load_tokenizer(kBundled);
  EXPECT_EQ(bundled.vocab().tokens, Model::load(kBundled)->tokenizer().vocab().tokens);
  EXPECT_EQ(bundled.encode("Once upon a time", true, false), (std::vector<int32_t>{1, 403, 407, 261, 378}));
  const std::string bin = kShared + "/models/stories260K.bin";
  if (!std::filesystem::exists(bin)) GTEST_SKIP() << "../shared/models/stories260K.bin not present";
  const Tokenizer llama2c = Model::load_tokenizer(bin, kShared + "/models/tok512.bin");
  EXPECT_EQ(llama2c.vocab().size(), 512);
  EXPECT_EQ(llama2c.encode("Once upon a time", true, false), bundled.encode("Once upon a time", true, false));
  EXPECT_EQ(Model::load_tokenizer(bin).vocab().size(), 512);  // tok512.bin beside the checkpoint
}

// Vocabulary-only GGUF files of architectures Parley cannot run still give
// their tokenizer; loading them as models fails with the reason.
TEST(ModelLoad, TokenizerOfAnyArchitecture) {
  for (const char* name : {"gpt-2", "starcoder", "phi-3", "llama-spm"}) {
    const std::string path = kShared + "/tokenizers/ggml-vocab-" + name + ".gguf";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
    EXPECT_GT(Model::load_tokenizer(path).vocab().size(), 30000) << path;
    EXPECT_THROW(Model::load(path), Error) << path;
  }
}

TEST(ModelLoad, TruncatedLlama2cNamesTheArray) {
  const std::string bin = kShared + "/models/stories260K.bin";
  if (!std::filesystem::exists(bin)) GTEST_SKIP() << "../shared/models/stories260K.bin not present";
  auto bytes = read_all(bin);
  bytes.resize(bytes.size() / 2);
  const std::string path = temp_path("trunc.bin");
  write_all(path, bytes);
  try {
    Model::load(path, kShared + "/models/tok512.bin");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(ModelLoad, SeparateClassifierLlama2c) {
  // A llama2.c header with a negative vocab size has its own classifier.
  const int32_t dim = 8, hidden = 16, layers = 1, heads = 2, kv = 1, vocab = 512, seq = 4;
  const int32_t header[7] = {dim, hidden, layers, heads, kv, -vocab, seq};
  const size_t kvd = size_t(dim / heads * kv);
  const size_t floats = size_t(vocab * dim) + dim + dim * dim + 2 * dim * kvd + dim * dim + dim + 3 * dim * hidden + dim +
                        size_t(seq * dim / heads) + size_t(vocab * dim);
  std::vector<char> bytes(sizeof(header) + floats * 4, 0);
  std::memcpy(bytes.data(), header, sizeof(header));
  const std::string tok = kShared + "/models/tok512.bin";
  if (!std::filesystem::exists(tok)) GTEST_SKIP() << "../shared/models/tok512.bin not present";
  const std::string path = temp_path("sep.bin");
  write_all(path, bytes);
  auto m = Model::load(path, tok);
  EXPECT_FALSE(m->config().tied_output);
  EXPECT_NE(m->weights().output.data, m->weights().token_embd.data);
  bytes.resize(bytes.size() - 4);
  write_all(path, bytes);
  EXPECT_THROW(Model::load(path, tok), Error);
  std::filesystem::remove(path);
}

TEST(ModelLoad, MissingAndMisshapenTensorsAreNamed) {
  MkModelSpec s;
  s.dim = 64;
  s.n_layers = 1;
  s.n_heads = 4;
  s.vocab_from = kBundled;
  const std::string path = temp_path("ok.gguf");
  write_random_model(s, path);
  // Rename a tensor in place: the loader must report it missing.
  auto bytes = read_all(path);
  const std::string name = "blk.0.ffn_up.weight";
  auto it = std::search(bytes.begin(), bytes.end(), name.begin(), name.end());
  ASSERT_NE(it, bytes.end());
  *(it + 8) = 'X';  // "blk.0.ffX_up.weight"
  const std::string broken = temp_path("missing.gguf");
  write_all(broken, bytes);
  try {
    Model::load(broken);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blk.0.ffn_up.weight"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
  std::filesystem::remove(broken);
}

TEST(ModelLoad, WrongShapeIsNamedWithBothShapes) {
  MkModelSpec s;
  s.dim = 64;
  s.n_layers = 1;
  s.n_heads = 4;
  s.vocab_from = kBundled;
  const std::string path = temp_path("shape-src.gguf");
  write_random_model(s, path);
  // Rewrite the file with one tensor reshaped (same bytes, other dims).
  auto src = gguf::File::open(path);
  gguf::Writer w;
  for (const auto& key : src->keys()) w.set(key, *src->find(key));
  for (const auto& t : src->tensors()) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    auto dims = t.name == "blk.0.attn_k.weight" ? std::vector<uint64_t>{32, 128} : t.dims;
    w.add_tensor(t.name, t.type, dims, std::vector<uint8_t>(p, p + t.n_bytes()));
  }
  const std::string broken = temp_path("shape.gguf");
  w.write(broken);
  try {
    Model::load(broken);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("blk.0.attn_k.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[32, 128]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[64, 64]"), std::string::npos) << msg;
  }
  std::filesystem::remove(path);
  std::filesystem::remove(broken);
}

// The metadata of a tiny model of architecture `arch`, with `extra` keys.
ModelConfig config_with(const std::vector<std::pair<std::string, gguf::Value>>& extra,
                        const std::string& arch = "llama") {
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::str(arch));
  for (const char* k : {".embedding_length", ".block_count", ".attention.head_count", ".feed_forward_length",
                        ".context_length"})
    w.set(arch + k, gguf::Value::u32(8));
  for (const auto& [k, v] : extra) w.set(k, v);
  const testing::TempFile file("config-" + arch + ".gguf");  // per process: tests run in parallel
  w.write(file.path);
  return config_from_gguf(*gguf::File::open(file.path));
}

// Gemma 2's required soft-cap keys.
std::vector<std::pair<std::string, gguf::Value>> softcaps(const std::string& arch) {
  return {{arch + ".attn_logit_softcapping", gguf::Value::f32(50.0f)},
          {arch + ".final_logit_softcapping", gguf::Value::f32(30.0f)}};
}

TEST(ModelConfig, EachFamilyTakesItsRowOfTraits) {
  for (const ArchTraits& a : supported_archs()) {
    const std::string arch(a.name);
    const ModelConfig c = config_with(a.softcap ? softcaps(arch) : std::vector<std::pair<std::string, gguf::Value>>{},
                                      arch);
    EXPECT_EQ(c.rope_style, a.rope_style) << a.name;
    EXPECT_EQ(c.qk_norm, a.qk_norm) << a.name;
    EXPECT_EQ(c.ffn_act, a.ffn_act) << a.name;
    EXPECT_EQ(c.post_norms, a.post_norms) << a.name;
    EXPECT_EQ(c.sliding_window_pattern, a.sliding_window_pattern) << a.name;
    EXPECT_EQ(c.embd_scale, a.scale_embd ? std::sqrt(8.0f) : 1.0f) << a.name;
  }
  EXPECT_EQ(config_with({}, "llama").rope_style, RopeStyle::Interleaved);
  EXPECT_EQ(config_with({}, "qwen2").rope_style, RopeStyle::Neox);
  EXPECT_TRUE(config_with({}, "qwen3").qk_norm);
  try {
    config_with({}, "falcon");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'falcon' is not supported (expected llama, mistral, qwen2, qwen3, qwen2moe, "
                                         "qwen3moe, olmoe, gemma2, gemma3 or phi3)"),
              std::string::npos)
        << e.what();
  }
}

TEST(ModelConfig, GemmaLayersAndCapsFromGguf) {
  const ModelConfig g2 = config_with(softcaps("gemma2"), "gemma2");
  EXPECT_EQ(g2.attn_softcap, 50.0f);
  EXPECT_EQ(g2.final_softcap, 30.0f);
  EXPECT_EQ(g2.sliding_window, 4096);  // the reference's default when the key is absent
  EXPECT_EQ(g2.window_of(0), 4096);
  EXPECT_EQ(g2.window_of(1), 0);
  const ModelConfig g3 = config_with({{"gemma3.attention.sliding_window", gguf::Value::u32(4)}}, "gemma3");
  EXPECT_EQ(g3.attn_softcap, 0.0f);
  EXPECT_EQ(g3.rope_base_swa, 10000.0f);
  for (int32_t l = 0; l < 12; ++l) EXPECT_EQ(g3.window_of(l), l % 6 == 5 ? 0 : 4) << l;  // 5 local, 1 global
  const ModelConfig custom = config_with({{"gemma3.attention.sliding_window", gguf::Value::u32(4)},
                                          {"gemma3.attention.sliding_window_pattern", gguf::Value::u32(2)}},
                                         "gemma3");
  EXPECT_EQ(custom.window_of(0), 4);
  EXPECT_EQ(custom.window_of(1), 0);
  // The per-layer form newer converters write: one flag per layer (8 here).
  gguf::Array flags{gguf::ValueType::BOOL, {}};
  for (int l = 0; l < 8; ++l) flags.items.push_back(gguf::Value::boolean(l != 3));
  const ModelConfig listed = config_with({{"gemma3.attention.sliding_window", gguf::Value::u32(4)},
                                          {"gemma3.attention.sliding_window_pattern", {gguf::ValueType::ARRAY, flags}}},
                                         "gemma3");
  for (int32_t l = 0; l < 8; ++l) EXPECT_EQ(listed.window_of(l), l == 3 ? 0 : 4) << l;
  flags.items.pop_back();
  EXPECT_THROW(config_with({{"gemma3.attention.sliding_window_pattern", {gguf::ValueType::ARRAY, flags}}}, "gemma3"),
               Error);
}

TEST(ModelConfig, RopeScalingFromGguf) {
  const ModelConfig yarn = config_with({{"qwen2.rope.scaling.type", gguf::Value::str("yarn")},
                                        {"qwen2.rope.scaling.factor", gguf::Value::f32(4.0f)},
                                        {"qwen2.rope.scaling.original_context_length", gguf::Value::u32(32768)}},
                                       "qwen2");
  EXPECT_EQ(yarn.yarn_factor, 4.0f);
  EXPECT_EQ(yarn.rope_orig_context, 32768);
  EXPECT_EQ(yarn.yarn_beta_fast, 32.0f);  // the reference's defaults
  EXPECT_EQ(yarn.yarn_beta_slow, 1.0f);
  EXPECT_EQ(yarn.rope_scale, 1.0f);
  // LongRoPE without its keys: the training context, no attention factor.
  const ModelConfig phi3 = config_with({}, "phi3");
  EXPECT_EQ(phi3.rope_orig_context, 8);
  EXPECT_EQ(phi3.rope_attn_factor, 1.0f);
  EXPECT_TRUE(phi3.fused);
  for (const auto& [type, factor] : {std::pair<const char*, float>{"yarn", 0.5f}, {"longrope", 2.0f}}) {
    try {
      config_with({{"qwen2.rope.scaling.type", gguf::Value::str(type)},
                   {"qwen2.rope.scaling.factor", gguf::Value::f32(factor)}},
                  "qwen2");
      ADD_FAILURE() << "expected an error for " << type;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("qwen2.rope.scaling."), std::string::npos) << e.what();
    }
  }
}

// `path` rewritten without the key or tensor `missing`, and with tensor
// `reshaped` (if named) given other dims of the same size.
std::string rewritten(const std::string& path, const std::string& missing, const std::string& reshaped = "") {
  auto src = gguf::File::open(path);
  gguf::Writer w;
  for (const auto& key : src->keys())
    if (key != missing) w.set(key, *src->find(key));
  for (const auto& t : src->tensors()) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    auto dims = t.name == reshaped ? std::vector<uint64_t>{t.dims[0] * 2, t.dims[1] / 2} : t.dims;
    if (t.name != missing) w.add_tensor(t.name, t.type, dims, std::vector<uint8_t>(p, p + t.n_bytes()));
  }
  const std::string broken = temp_path("broken.gguf");
  w.write(broken);
  return broken;
}

void expect_error_naming(const std::string& path, const std::string& name) {
  testing::expect_load_error(path, {"'" + name + "'"});
}

// A Gemma 2 or Phi-3 file without a key or tensor its family needs, or with
// a fused tensor of the wrong shape: the error names it.
TEST(ModelLoad, FamiliesNeedTheirKeysAndTensors) {
  const std::pair<const char*, std::vector<std::string>> cases[] = {
      {"gemma2",
       {"gemma2.final_logit_softcapping", "gemma2.attn_logit_softcapping", "blk.1.post_ffw_norm.weight",
        "blk.0.post_attention_norm.weight"}},
      {"phi3", {"blk.0.attn_qkv.weight", "blk.1.ffn_up.weight"}}};
  for (const auto& [arch, needed] : cases) {
    MkModelSpec s;
    s.arch = arch;
    s.dim = 64;
    s.n_layers = 2;
    s.n_heads = 4;
    s.vocab_from = kBundled;
    const std::string path = temp_path(std::string(arch) + "-src.gguf");
    write_random_model(s, path);
    for (const std::string& missing : needed) expect_error_naming(rewritten(path, missing), missing);
    if (std::string(arch) == "phi3")
      for (const char* fused : {"blk.1.attn_qkv.weight", "blk.0.ffn_up.weight"})
        expect_error_naming(rewritten(path, "", fused), fused);
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace parley
