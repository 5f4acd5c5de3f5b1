// Which type each tensor gets under a quantization recipe, and re-encoding rows.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/quant.h"
#include "model/quant_recipe.h"

namespace parley {
namespace {

QuantRecipe recipe(const char* name) {
  const auto r = quant_recipe_from_name(name);
  EXPECT_TRUE(r) << name;
  return r.value_or(QuantRecipe{});
}

TEST(QuantRecipe, NamesParse) {
  EXPECT_EQ(recipe("q8_0").base, DType::Q8_0);
  EXPECT_FALSE(recipe("q8_0").mixed);
  EXPECT_EQ(recipe("Q4_K_M").base, DType::Q4_K);
  EXPECT_TRUE(recipe("q4_k_m").mixed);
  EXPECT_FALSE(quant_recipe_from_name("q8_0_m"));  // only K-quants have mixed recipes
  EXPECT_FALSE(quant_recipe_from_name("q3_x"));
}

TEST(QuantRecipe, VectorsStayF32) {
  EXPECT_EQ(tensor_type(recipe("q4_0"), "blk.0.attn_norm.weight", {4096}, 32), DType::F32);
}

TEST(QuantRecipe, ExpertRouterStaysF32ExpertsAreQuantized) {
  EXPECT_EQ(tensor_type(recipe("q4_0"), "blk.0.ffn_gate_inp.weight", {2048, 128}, 48), DType::F32);
  EXPECT_EQ(tensor_type(recipe("q4_0"), "blk.0.ffn_up_exps.weight", {2048, 768, 128}, 48), DType::Q4_0);
  EXPECT_EQ(tensor_type(recipe("q4_k_m"), "blk.0.ffn_down_exps.weight", {768, 2048, 128}, 48), DType::Q6_K);
  EXPECT_EQ(tensor_type(recipe("q4_k_m"), "blk.7.ffn_down_exps.weight", {768, 2048, 128}, 48), DType::Q4_K);
  // An early Mixtral file's per-expert tensors.
  EXPECT_EQ(tensor_type(recipe("q4_k_m"), "blk.0.ffn_down.3.weight", {14336, 4096}, 32), DType::Q6_K);
  EXPECT_EQ(tensor_type(recipe("q4_k_m"), "blk.7.ffn_down.3.weight", {14336, 4096}, 32), DType::Q4_K);
}

TEST(QuantRecipe, MixedRecipeGivesSensitiveTensorsMoreBits) {
  const QuantRecipe r = recipe("q4_k_m");
  const std::vector<uint64_t> dims{4096, 4096};
  EXPECT_EQ(tensor_type(r, "output.weight", dims, 32), DType::Q6_K);
  EXPECT_EQ(tensor_type(r, "token_embd.weight", dims, 32), DType::Q4_K);
  EXPECT_EQ(tensor_type(r, "blk.0.attn_v.weight", dims, 32), DType::Q6_K);    // first eighth
  EXPECT_EQ(tensor_type(r, "blk.31.ffn_down.weight", dims, 32), DType::Q6_K);  // last eighth
  EXPECT_EQ(tensor_type(r, "blk.4.attn_v.weight", dims, 32), DType::Q4_K);
  EXPECT_EQ(tensor_type(r, "blk.6.attn_v.weight", dims, 32), DType::Q6_K);    // every third in between
  EXPECT_EQ(tensor_type(r, "blk.6.attn_q.weight", dims, 32), DType::Q4_K);
}

// llama.cpp's Q3_K_M: attn_v Q5_K in the first two blocks and Q4_K after,
// ffn_down Q5_K in the first sixteenth and Q4_K after, attn_output Q4_K.
TEST(QuantRecipe, Q3_K_M) {
  const QuantRecipe r = recipe("q3_k_m");
  const std::vector<uint64_t> dims{4096, 4096};
  EXPECT_EQ(r.base, DType::Q3_K);
  EXPECT_EQ(tensor_type(r, "output.weight", dims, 32), DType::Q6_K);
  EXPECT_EQ(tensor_type(r, "token_embd.weight", dims, 32), DType::Q3_K);
  EXPECT_EQ(tensor_type(r, "blk.1.attn_v.weight", dims, 32), DType::Q5_K);
  EXPECT_EQ(tensor_type(r, "blk.2.attn_v.weight", dims, 32), DType::Q4_K);
  EXPECT_EQ(tensor_type(r, "blk.1.ffn_down.weight", dims, 32), DType::Q5_K);
  EXPECT_EQ(tensor_type(r, "blk.2.ffn_down.weight", dims, 32), DType::Q4_K);
  EXPECT_EQ(tensor_type(r, "blk.9.attn_output.weight", dims, 32), DType::Q4_K);
  EXPECT_EQ(tensor_type(r, "blk.9.ffn_gate.weight", dims, 32), DType::Q3_K);
  EXPECT_EQ(tensor_type(r, "blk.9.attn_q.weight", dims, 32), DType::Q3_K);
}

// llama.cpp's Q2_K: attn_v Q4_K with 4+ query heads per KV head (its rows
// a quarter of its columns or fewer), else Q3_K; ffn_down and attn_output Q3_K.
TEST(QuantRecipe, Q2_K_M) {
  const QuantRecipe r = recipe("q2_k_m");
  EXPECT_EQ(r.base, DType::Q2_K);
  EXPECT_EQ(tensor_type(r, "output.weight", {4096, 32000}, 32), DType::Q6_K);
  EXPECT_EQ(tensor_type(r, "blk.0.attn_v.weight", {4096, 4096}, 32), DType::Q3_K);
  EXPECT_EQ(tensor_type(r, "blk.0.attn_v.weight", {4096, 1024}, 32), DType::Q4_K);  // 4 heads per KV head
  EXPECT_EQ(tensor_type(r, "blk.5.ffn_down.weight", {11008, 4096}, 32), DType::Q3_K);
  EXPECT_EQ(tensor_type(r, "blk.5.attn_output.weight", {4096, 4096}, 32), DType::Q3_K);
  EXPECT_EQ(tensor_type(r, "blk.5.ffn_up.weight", {4096, 11008}, 32), DType::Q2_K);
  EXPECT_EQ(recipe("q2_k").mixed, false);
  EXPECT_EQ(tensor_type(recipe("q2_k"), "blk.5.ffn_down.weight", {11008, 4096}, 32), DType::Q2_K);
  EXPECT_FALSE(quant_recipe_from_name("iq4_xs_m"));
}

TEST(QuantRecipe, NarrowRowsFallBack) {
  for (const char* low : {"q2_k", "q3_k", "iq4_xs"})
    EXPECT_EQ(tensor_type(recipe(low), "blk.0.attn_q.weight", {64, 64}, 5), DType::IQ4_NL) << low;
  EXPECT_EQ(tensor_type(recipe("iq4_nl"), "blk.0.ffn_down.weight", {172, 64}, 5), DType::F16);
  EXPECT_EQ(planned_type(recipe("q3_k"), "blk.0.attn_q.weight", {64, 64}, 5), DType::Q3_K);
  EXPECT_EQ(tensor_type(recipe("q4_k"), "blk.0.attn_q.weight", {64, 64}, 5), DType::Q4_0);
  EXPECT_EQ(tensor_type(recipe("q6_k"), "blk.0.attn_q.weight", {64, 64}, 5), DType::Q8_0);
  EXPECT_EQ(tensor_type(recipe("q8_0"), "blk.0.ffn_down.weight", {172, 64}, 5), DType::F16);
  EXPECT_EQ(tensor_type(recipe("q4_k"), "blk.0.ffn_down.weight", {172, 64}, 5), DType::F16);
}

TEST(QuantRecipe, ConvertRowsMatchesTheReferenceQuantizer) {
  const uint64_t cols = 64, rows = 3;
  std::vector<float> x(cols * rows);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i) * 0.37f);
  const auto q = convert_rows(DType::F32, x.data(), cols, rows, DType::Q8_0);
  std::vector<uint8_t> want(row_bytes(DType::Q8_0, cols) * rows);
  for (uint64_t r = 0; r < rows; ++r)
    quantize_row(DType::Q8_0, x.data() + r * cols, want.data() + r * row_bytes(DType::Q8_0, cols), int64_t(cols));
  EXPECT_EQ(q, want);
  const auto back = convert_rows(DType::Q8_0, q.data(), cols, rows, DType::F32);
  const auto* y = reinterpret_cast<const float*>(back.data());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i], 0.01f);
  EXPECT_EQ(convert_rows(DType::Q8_0, q.data(), cols, rows, DType::Q8_0), q);  // same type: a copy
}

// Enough rows to be split over threads: each row as quantize_row writes it.
TEST(QuantRecipe, ConvertRowsSplitOverThreadsMatchesRowByRow) {
  const uint64_t cols = 256, rows = 301;
  std::vector<float> x(cols * rows);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i) * 0.11f) * float(1 + i % 7);
  for (const DType t : {DType::Q3_K, DType::IQ4_XS}) {
    const auto q = convert_rows(DType::F32, x.data(), cols, rows, t);
    std::vector<uint8_t> want(row_bytes(t, cols) * rows);
    for (uint64_t r = 0; r < rows; ++r)
      quantize_row(t, x.data() + r * cols, want.data() + r * row_bytes(t, cols), int64_t(cols));
    EXPECT_EQ(q, want) << dtype_name(t);
  }
}

TEST(QuantRecipe, ConvertRowsRejectsPartialBlocks) {
  std::vector<float> x(100 * 2);
  EXPECT_THROW(convert_rows(DType::F32, x.data(), 100, 2, DType::Q3_K), std::exception);
  EXPECT_THROW(convert_rows(DType::F32, x.data(), 100, 2, DType::IQ4_NL), std::exception);
}

}  // namespace
}  // namespace parley
