#pragma once
// Which type each tensor gets when a model is quantized (`parley quantize`,
// `parley convert --type`): one type for every matrix, or a mixed recipe
// that keeps the most sensitive matrices at higher precision
// (docs/quantization.md). Vectors (norms, biases) always stay F32.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"

namespace parley {

struct QuantRecipe {
  std::string name;          // "q8_0", "q4_k_m", ...
  DType base = DType::F32;   // the type of most matrices
  bool mixed = false;        // *_M: the sensitive matrices get more bits (docs/quantization.md)
};

std::optional<QuantRecipe> quant_recipe_from_name(std::string_view name);
std::string quant_recipe_names();

// Tensors every recipe keeps in F32: vectors, and the MoE router
// (ffn_gate_inp: small, and its choice of experts is a step function of its
// logits), as llama.cpp keeps them.
bool stays_f32(const std::string& name, const std::vector<uint64_t>& dims);

// The type the recipe chooses for tensor `name` of shape `dims` (dims[0]
// innermost) in a model of `n_layers` blocks, before any fallback (F32 where stays_f32).
DType planned_type(const QuantRecipe& recipe, const std::string& name, const std::vector<uint64_t>& dims,
                   int32_t n_layers);

// planned_type, or where the type's block does not divide the row length a
// fallback: Q4_K / Q5_K / Q6_K to the legacy type of about the same size,
// Q2_K / Q3_K / IQ4_XS to IQ4_NL, 32-element types to F16.
DType tensor_type(const QuantRecipe& recipe, const std::string& name, const std::vector<uint64_t>& dims,
                  int32_t n_layers);

// `rows` rows of `cols` elements of type `from` re-encoded as `to`.
std::vector<uint8_t> convert_rows(DType from, const void* src, uint64_t cols, uint64_t rows, DType to);

}  // namespace parley
