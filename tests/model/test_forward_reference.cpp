// The engine's logits against the naive float64 reference, for every
// architecture, on models written by mkmodel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <ostream>

#include "kernels/thread_pool.h"
#include "model/sequence_forward.h"
#include "model/mkmodel.h"
#include "model/model.h"
#include "reference_forward.h"
#include "model_test_util.h"

namespace parley {
namespace {

using testing::max_relative_error;
using testing::temp_path;

struct ArchCase {
  const char* name;
  MkModelSpec spec;
};

// Failure messages name the case rather than dumping its bytes.
void PrintTo(const ArchCase& c, std::ostream* os) { *os << c.name; }

MkModelSpec base_spec(const char* arch) {
  MkModelSpec s;
  s.arch = arch;
  s.dim = 64;
  s.n_layers = 2;
  s.n_heads = 4;
  s.ffn_dim = 96;
  s.context_length = 256;
  s.vocab_from = PARLEY_SOURCE_DIR "/models/stories260K.gguf";
  s.seed = 7;
  return s;
}

// Mixture-of-experts families: a few experts, more than one used per token.
std::vector<ArchCase> moe_cases() {
  auto moe = [](const char* arch, int32_t experts, int32_t used) {
    auto s = base_spec(arch);
    s.n_kv_heads = 2;
    s.n_experts = experts;
    s.n_experts_used = used;
    return s;
  };
  auto qwen3moe = moe("qwen3moe", 8, 3);
  qwen3moe.head_dim = 32;
  auto qwen2moe = moe("qwen2moe", 6, 2);
  qwen2moe.shared_expert_ffn = 64;
  auto olmoe = moe("olmoe", 8, 2);
  olmoe.n_kv_heads = 4;  // OLMoE has no grouped-query attention
  return {{"qwen3moe", qwen3moe}, {"mixtral", moe("mixtral", 8, 2)}, {"qwen2moe", qwen2moe}, {"olmoe", olmoe}};
}

std::vector<ArchCase> arch_cases() {
  std::vector<ArchCase> cases;
  cases.push_back({"llama", base_spec("llama")});
  auto llama3 = base_spec("llama3");
  llama3.n_kv_heads = 2;
  cases.push_back({"llama3", llama3});
  auto tiny = base_spec("tinyllama");
  tiny.n_heads = 8;
  tiny.n_kv_heads = 2;
  tiny.tied_output = true;
  cases.push_back({"tinyllama", tiny});
  auto mistral = base_spec("mistral");
  mistral.n_kv_heads = 2;
  mistral.sliding_window = 8;  // short, so the prompts cross it
  cases.push_back({"mistral", mistral});
  auto qwen2 = base_spec("qwen2");
  qwen2.n_kv_heads = 2;
  cases.push_back({"qwen2", qwen2});
  auto qwen3 = base_spec("qwen3");
  qwen3.n_kv_heads = 2;
  qwen3.head_dim = 32;  // q_dim 128 != dim 64, as in real Qwen3 models
  cases.push_back({"qwen3", qwen3});
  auto gemma2 = base_spec("gemma2");
  gemma2.n_kv_heads = 2;
  gemma2.head_dim = 32;
  gemma2.sliding_window = 8;  // on even layers
  gemma2.attn_softcap = 1.0f;  // small caps, so that capping moves the logits
  gemma2.final_softcap = 2.0f;
  cases.push_back({"gemma2", gemma2});
  auto gemma3 = base_spec("gemma3");
  gemma3.n_layers = 7;  // five local layers, a global one, a local one
  gemma3.n_kv_heads = 1;
  gemma3.head_dim = 32;
  gemma3.sliding_window = 8;
  cases.push_back({"gemma3", gemma3});
  auto phi3 = base_spec("phi3");  // Phi-3.5-mini-like: LongRoPE, long factors at the full context
  phi3.original_context = 128;
  cases.push_back({"phi3", phi3});
  auto phi4 = base_spec("phi3");  // Phi-4-mini-like: partial rotary, GQA, tied output
  phi4.n_kv_heads = 2;
  phi4.head_dim = 32;
  phi4.rope_dim = 24;
  phi4.tied_output = true;
  phi4.original_context = 128;
  cases.push_back({"phi4", phi4});
  auto yarn = base_spec("qwen2");  // Qwen2.5 long context
  yarn.n_kv_heads = 2;
  yarn.yarn_factor = 4.0f;
  yarn.original_context = 64;
  cases.push_back({"qwen2_yarn", yarn});
  for (ArchCase c : moe_cases()) cases.push_back(c);
  return cases;
}

std::vector<std::vector<int>> prompts() {
  std::vector<int> longer;
  for (int i = 0; i < 70; ++i) longer.push_back((i * 37 + 11) % 512);  // crosses a prefill chunk
  return {{1, 403, 407, 261, 378}, {1, 5, 300, 12, 99, 100, 101, 7, 8, 9, 450, 33, 2, 17, 3, 4, 6}, longer};
}

// context: the pass's context (0: the model's training context).
void expect_matches_reference(const std::string& path, double tolerance, int threads, int32_t context = 0) {
  auto model = Model::load(path);
  ThreadPool pool(threads);
  for (const auto& p : prompts()) {
    const auto want = testing::reference_logits(path, p, context);
    SequenceForward fwd(*model, pool, context);
    std::vector<float> got(p.size() * size_t(model->config().vocab_size));
    // Evaluate in two calls so the second part attends to cached K/V.
    const int32_t split = int32_t(p.size()) / 2;
    fwd.eval(p.data(), split, got.data());
    fwd.eval(p.data() + split, int32_t(p.size()) - split, got.data() + size_t(split) * size_t(model->config().vocab_size));
    for (size_t t = 0; t < p.size(); ++t)
      ASSERT_LT(max_relative_error(got.data() + t * size_t(model->config().vocab_size), want[t]), tolerance)
          << path << " position " << t << " of a " << p.size() << "-token prompt";
  }
}

class ArchTest : public ::testing::TestWithParam<ArchCase> {};

TEST_P(ArchTest, F32LogitsMatchFloat64Reference) {
  const std::string path = temp_path(std::string(GetParam().name) + ".gguf");
  write_random_model(GetParam().spec, path);
  expect_matches_reference(path, 1e-4, 1);
  expect_matches_reference(path, 1e-4, 2);
  // Within the original context, LongRoPE takes its short factors.
  if (GetParam().spec.arch == "phi3") expect_matches_reference(path, 1e-4, 2, 100);
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(AllArchitectures, ArchTest, ::testing::ValuesIn(arch_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// Quantized weights: the reference uses the same (dequantized) weights, the
// engine also quantizes activations, so agreement is looser but still tight.
TEST(QuantizedForward, MatchesReference) {
  for (DType type : {DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q5_1, DType::Q2_K, DType::Q3_K,
                     DType::Q4_K, DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS}) {
    auto spec = base_spec("llama");
    spec.dim = 256;
    spec.n_heads = 4;
    spec.ffn_dim = 512;
    spec.type = type;
    const std::string path = temp_path(std::string(dtype_name(type)) + ".gguf");
    write_random_model(spec, path);
    const double tol = (type == DType::F16 || type == DType::BF16) ? 2e-2 : 5e-2;
    SCOPED_TRACE(dtype_name(type));
    expect_matches_reference(path, tol, 2);
    std::filesystem::remove(path);
  }
}

// Q8_0 experts (the router stays F32, as llama.cpp writes it). Every token
// goes through every expert here: the choice of k is a step function, and a
// quantized pass's logits may fall on the other side of a near-tie with the
// reference (one token's other expert is a large logit difference). The
// choice itself is checked with F32 weights above and by test_moe.
TEST(QuantizedForward, MixtureOfExpertsQ8_0MatchesReference) {
  for (ArchCase c : moe_cases()) {
    c.spec.type = DType::Q8_0;
    c.spec.n_experts_used = c.spec.n_experts;
    const std::string path = temp_path(std::string(c.name) + "-q8_0.gguf");
    write_random_model(c.spec, path);
    SCOPED_TRACE(c.name);
    expect_matches_reference(path, 5e-2, 2);
    std::filesystem::remove(path);
  }
}

// The families' own steps (soft-caps, GeGLU, post-norms, local layers) on
// quantized weights too.
TEST(QuantizedForward, NewFamiliesMatchReference) {
  for (const char* arch : {"gemma2", "gemma3", "phi3"}) {
    auto spec = base_spec(arch);
    spec.dim = 256;
    spec.n_layers = 6;
    spec.n_kv_heads = 2;
    spec.head_dim = 64;
    spec.ffn_dim = 512;
    spec.sliding_window = 8;
    spec.attn_softcap = 1.0f;
    spec.final_softcap = 2.0f;
    spec.type = DType::Q8_0;
    const std::string path = temp_path(std::string(arch) + "-q8_0.gguf");
    write_random_model(spec, path);
    SCOPED_TRACE(arch);
    expect_matches_reference(path, 5e-2, 2);
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace parley
