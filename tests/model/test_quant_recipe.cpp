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

TEST(QuantRecipe, NarrowRowsFallBack) {
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

}  // namespace
}  // namespace parley
