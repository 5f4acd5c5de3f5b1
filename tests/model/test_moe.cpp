// Mixture-of-experts: the router's choice, the grouped expert step against
// token-by-token products, and clean errors for broken MoE files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include "gguf/writer.h"
#include "kernels/quant.h"
#include "model/expert_router.h"
#include "model/mkmodel.h"
#include "model/model.h"
#include "model/model_files.h"
#include "model/moe_ffn.h"
#include "model/sequence_forward.h"
#include "util/error.h"
#include "model_test_util.h"

namespace parley {
namespace {

using testing::kBundled;
using testing::temp_path;

TEST(ExpertRouter, SoftmaxThenTopK) {
  const float logits[] = {0.5f, 2.0f, -1.0f, 1.0f, 2.0f};
  double total = 0;
  for (float l : logits) total += std::exp(double(l));
  int32_t ids[3];
  float w[3];
  route_token(logits, 5, 3, false, ids, w);
  // Ties go to the lower index: 1 before 4.
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 4);
  EXPECT_EQ(ids[2], 3);
  EXPECT_NEAR(w[0], std::exp(2.0) / total, 1e-6);
  EXPECT_NEAR(w[1], std::exp(2.0) / total, 1e-6);
  EXPECT_NEAR(w[2], std::exp(1.0) / total, 1e-6);
  route_token(logits, 5, 3, true, ids, w);
  const double chosen = 2 * std::exp(2.0) + std::exp(1.0);
  EXPECT_NEAR(w[0], std::exp(2.0) / chosen, 1e-6);
  EXPECT_NEAR(w[2], std::exp(1.0) / chosen, 1e-6);
  EXPECT_NEAR(w[0] + w[1] + w[2], 1.0, 1e-6);
}

TEST(ExpertRouter, EveryExpertWhenKIsAll) {
  const float logits[] = {3.0f, -2.0f, 0.0f};
  int32_t ids[3];
  float w[3];
  route_token(logits, 3, 3, true, ids, w);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 2);
  EXPECT_EQ(ids[2], 1);
  EXPECT_NEAR(w[0] + w[1] + w[2], 1.0, 1e-6);
}

MkModelSpec moe_spec(const char* arch, DType type) {
  MkModelSpec s;
  s.arch = arch;
  s.dim = 64;
  s.n_layers = 1;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.ffn_dim = 64;
  s.n_experts = 8;
  s.n_experts_used = 2;
  s.shared_expert_ffn = std::string(arch) == "qwen2moe" ? 96 : 0;
  s.type = type;
  s.vocab_from = kBundled;
  s.seed = 11;
  return s;
}

// A step over many tokens (grouped by expert) gives each token the output
// and the routing it gets alone.
TEST(MoeFfn, GroupedStepEqualsPerTokenProducts) {
  for (const char* arch : {"qwen3moe", "qwen2moe"})
    for (DType type : {DType::F32, DType::Q8_0}) {
      SCOPED_TRACE(std::string(arch) + " " + std::string(dtype_name(type)));
      const std::string path = temp_path(std::string(arch) + "-grouped.gguf");
      write_random_model(moe_spec(arch, type), path);
      auto model = Model::load(path);
      const ModelConfig& c = model->config();
      const MoeWeights& w = model->weights().layers[0].moe;
      ASSERT_TRUE(w.enabled());
      ThreadPool pool(2);
      constexpr int32_t n = 24;
      std::vector<float> x(size_t(n) * size_t(c.dim));
      for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(double(i) * 0.37));
      MoeFfn batched(c, n), single(c, 1);
      const float* out = batched.forward(w, x.data(), n, pool);
      std::vector<bool> used(size_t(c.moe.n_experts));
      for (int32_t t = 0; t < n; ++t) {
        const float* one = single.forward(w, x.data() + size_t(t) * size_t(c.dim), 1, pool);
        for (int32_t j = 0; j < c.moe.n_used; ++j) {
          const size_t p = size_t(t) * size_t(c.moe.n_used) + size_t(j);
          ASSERT_EQ(batched.expert_ids()[p], single.expert_ids()[j]) << "token " << t;
          ASSERT_EQ(batched.expert_weights()[p], single.expert_weights()[j]) << "token " << t;
          used[size_t(single.expert_ids()[j])] = true;
        }
        for (int32_t i = 0; i < c.dim; ++i)
          ASSERT_NEAR(out[size_t(t) * size_t(c.dim) + size_t(i)], one[i], 1e-5 * (1 + std::abs(one[i])))
              << "token " << t << " element " << i;
      }
      EXPECT_GE(std::count(used.begin(), used.end(), true), 4);  // the tokens really went to mixed experts
      std::filesystem::remove(path);
    }
}

// Files written before llama.cpp's converter stacked the experts (early
// Mixtral downloads) hold one 2-D tensor per expert, blk.N.ffn_gate.E.weight:
// they load into the same views and give the same logits; a missing expert is
// named.
TEST(MoeLoad, PerExpertTensorsOfEarlyMixtralFiles) {
  const std::string path = temp_path("mixtral-3d.gguf"), split = temp_path("mixtral-2d.gguf");
  write_random_model(moe_spec("mixtral", DType::Q8_0), path);
  const auto write_split = [&](uint64_t experts_kept) {
    auto src = gguf::File::open(path);
    gguf::Writer w;
    for (const auto& key : src->keys()) w.set(key, *src->find(key));
    for (const auto& t : src->tensors()) {
      const auto* p = static_cast<const uint8_t*>(t.data);
      const std::string exps = "_exps.weight";
      if (t.name.size() <= exps.size() || t.name.compare(t.name.size() - exps.size(), exps.size(), exps) != 0) {
        w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(p, p + t.n_bytes()));
        continue;
      }
      const std::string stem = t.name.substr(0, t.name.size() - exps.size());
      const uint64_t bytes = t.n_bytes() / t.dims[2];
      for (uint64_t e = 0; e < experts_kept; ++e)
        w.add_tensor(stem + "." + std::to_string(e) + ".weight", t.type, {t.dims[0], t.dims[1]},
                     std::vector<uint8_t>(p + e * bytes, p + (e + 1) * bytes));
    }
    w.write(split);
  };
  write_split(8);
  auto stacked = Model::load(path), per_expert = Model::load(split);
  ASSERT_EQ(per_expert->weights().layers[0].moe.down.size(), 8u);
  ThreadPool pool(2);
  const std::vector<int32_t> tokens = {1, 403, 407, 261, 378, 99, 12, 7};
  const size_t vocab = size_t(stacked->config().vocab_size);
  std::vector<float> a(tokens.size() * vocab), b(tokens.size() * vocab);
  SequenceForward(*stacked, pool).eval(tokens.data(), int32_t(tokens.size()), a.data());
  SequenceForward(*per_expert, pool).eval(tokens.data(), int32_t(tokens.size()), b.data());
  EXPECT_EQ(a, b);
  per_expert.reset();
  write_split(7);
  testing::expect_load_error(split, {"blk.0.ffn_gate.7.weight", "missing"});
  std::filesystem::remove(path);
}

// quantize re-encodes the 3-D expert tensors expert by expert (same shape,
// the recipe's type) and keeps the router F32; the result runs.
TEST(MoeQuantize, ExpertTensorsAreQuantizedRouterStaysF32) {
  const std::string path = temp_path("moe-f32.gguf"), out = temp_path("moe-q8.gguf");
  write_random_model(moe_spec("qwen2moe", DType::F32), path);
  const WriteReport r = quantize_gguf(path, out, *quant_recipe_from_name("q8_0"));
  EXPECT_EQ(r.fallbacks, 0);
  auto f32 = Model::load(path), q8 = Model::load(out);
  const MoeWeights &a = f32->weights().layers[0].moe, &b = q8->weights().layers[0].moe;
  EXPECT_EQ(b.router.type, DType::F32);
  ASSERT_EQ(b.down.size(), a.down.size());
  for (size_t e = 0; e < b.down.size(); ++e) {
    EXPECT_EQ(b.gate[e].type, DType::Q8_0);
    EXPECT_EQ(b.down[e].rows, a.down[e].rows);
    EXPECT_EQ(b.down[e].cols, a.down[e].cols);
  }
  EXPECT_EQ(b.shared_down.type, DType::Q8_0);
  // Expert 5's down projection, dequantized, is close to the F32 one's.
  std::vector<float> want(size_t(a.down[5].cols)), got(want.size());
  const uint64_t row = 3;
  dequantize_row(DType::F32, static_cast<const uint8_t*>(a.down[5].data) + row * row_bytes(DType::F32, want.size()),
                 want.data(), int64_t(want.size()));
  dequantize_row(DType::Q8_0, static_cast<const uint8_t*>(b.down[5].data) + row * row_bytes(DType::Q8_0, got.size()),
                 got.data(), int64_t(got.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 0.02);
  std::filesystem::remove(path);
  std::filesystem::remove(out);
}

// Rewrites `path` with `fix` applied to each tensor's dims and `key` set.
std::string rewrite(const std::string& path, const std::string& name,
                    const std::function<void(const std::string&, std::vector<uint64_t>&)>& fix,
                    const std::vector<std::pair<std::string, gguf::Value>>& keys = {}) {
  auto src = gguf::File::open(path);
  gguf::Writer w;
  for (const auto& key : src->keys()) w.set(key, *src->find(key));
  for (const auto& [k, v] : keys) w.set(k, v);
  for (const auto& t : src->tensors()) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    auto dims = t.dims;
    fix(t.name, dims);
    w.add_tensor(t.name, t.type, dims, std::vector<uint8_t>(p, p + t.n_bytes()));
  }
  const std::string out = temp_path(name);
  w.write(out);
  return out;
}

TEST(MoeLoad, BadFilesAreNamed) {
  const std::string path = temp_path("moe-ok.gguf");
  write_random_model(moe_spec("qwen3moe", DType::F32), path);
  // Experts and rows swapped: same bytes, other shape.
  testing::expect_load_error(rewrite(path, "moe-shape.gguf",
                              [](const std::string& n, std::vector<uint64_t>& d) {
                                if (n == "blk.0.ffn_up_exps.weight") std::swap(d[1], d[2]);
                              }),
                      {"blk.0.ffn_up_exps.weight", "[64, 8, 64]", "[64, 64, 8]"});
  // A 2-D expert tensor (the experts' rows stacked).
  testing::expect_load_error(rewrite(path, "moe-2d.gguf",
                              [](const std::string& n, std::vector<uint64_t>& d) {
                                if (n == "blk.0.ffn_down_exps.weight") d = {d[0], d[1] * d[2]};
                              }),
                      {"blk.0.ffn_down_exps.weight", "[64, 512]"});
  testing::expect_load_error(rewrite(path, "moe-used.gguf", [](const std::string&, std::vector<uint64_t>&) {},
                              {{"qwen3moe.expert_used_count", gguf::Value::u32(9)}}),
                      {"qwen3moe.expert_used_count 9", "qwen3moe.expert_count 8"});
  testing::expect_load_error(rewrite(path, "moe-zero.gguf", [](const std::string&, std::vector<uint64_t>&) {},
                              {{"qwen3moe.expert_used_count", gguf::Value::u32(0)}}),
                      {"qwen3moe.expert_used_count 0"});
  // A router with too few experts.
  testing::expect_load_error(rewrite(path, "moe-router.gguf",
                              [](const std::string& n, std::vector<uint64_t>& d) {
                                if (n == "blk.0.ffn_gate_inp.weight") d = {32, d[1] * 2};
                              }),
                      {"blk.0.ffn_gate_inp.weight", "[32, 16]", "[64, 8]"});
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace parley
