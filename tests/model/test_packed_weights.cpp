// Model::Layout::kPack (packed copies of the Q8_0 / Q4_0 matrices for the int8
// GEMM) against kMapOnly: the same logits, for tied and untied output matrices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "kernels/cpu.h"
#include "model/sequence_forward.h"
#include "model/mkmodel.h"
#include "model_test_util.h"

namespace parley {
namespace {

using testing::kBundled;

std::vector<float> all_logits(const Model& model, const std::vector<int32_t>& tokens) {
  ThreadPool pool(2);
  SequenceForward fwd(model, pool);
  std::vector<float> out(tokens.size() * size_t(model.config().vocab_size));
  fwd.eval(tokens.data(), int32_t(tokens.size()), out.data());
  return out;
}

TEST(PackedWeights, SameLogitsAsTheFileLayout) {
  for (const DType type : {DType::Q8_0, DType::Q4_0})
  for (const bool tied : {false, true}) {
    SCOPED_TRACE(std::string(dtype_name(type)) + (tied ? ", tied output" : ", separate output"));
    MkModelSpec s;
    s.dim = 128;
    s.ffn_dim = 384;
    s.n_heads = 4;
    s.n_kv_heads = 2;
    s.tied_output = tied;
    s.type = type;
    s.vocab_from = kBundled;
    const auto path = (std::filesystem::temp_directory_path() /
                       ("parley-packed-" + std::to_string(::getpid()) + std::string(dtype_name(type)) + (tied ? "-tied" : "") + ".gguf"))
                          .string();
    write_random_model(s, path);
    const auto packed = Model::load(path, "", Model::Layout::kPack);
    const auto mapped = Model::load(path, "", Model::Layout::kMapOnly);
    std::filesystem::remove(path);

    EXPECT_EQ(mapped->packed_bytes(), 0u);
    if (active_isa() < Isa::Avx2) {
      EXPECT_EQ(packed->packed_bytes(), 0u) << "packing only pays off on a SIMD path";
      continue;
    }
    const Weights& w = packed->weights();
    EXPECT_NE(w.layers[0].w_down.packed, nullptr);
    EXPECT_NE(w.output.packed, nullptr);
    EXPECT_EQ(w.token_embd.packed, nullptr) << "the embedding lookup reads rows";
    // Every matrix the kernels read is packed, in the same bytes (whole
    // groups of 16 rows and pairs of blocks here).
    uint64_t matrix_bytes = 0;
    auto add = [&](const MatrixView& m) { matrix_bytes += row_bytes(m.type, uint64_t(m.cols)) * uint64_t(m.rows); };
    for (const LayerWeights& l : w.layers)
      for (const MatrixView* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) add(*m);
    add(w.output);
    EXPECT_EQ(packed->packed_bytes(), matrix_bytes);

    std::vector<int32_t> tokens(70);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t((i * 53 + 7) % 512);
    // Both layouts quantize the activations the same way, but sum in other
    // orders: a last-bit difference can flip the next layer's 8-bit rounding
    // of an activation, so this random model's logits differ by about 1%
    // (a wrong layout gives unrelated logits). On AMX CPUs, 70 tokens run the
    // packed model's matrices and attention on bf16 tiles (packed_gemm.h,
    // model/attention_query.h), which stay within the same bound.
    const auto got = all_logits(*packed, tokens), want = all_logits(*mapped, tokens);
    double max_abs = 0, max_err = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      max_abs = std::max(max_abs, std::abs(double(want[i])));
      max_err = std::max(max_err, std::abs(double(got[i]) - double(want[i])));
    }
    EXPECT_LT(max_err / max_abs, 5e-2);
  }
}

}  // namespace
}  // namespace parley
