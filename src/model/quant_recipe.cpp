#include "model/quant_recipe.h"

#include <cstring>

#include "kernels/quant.h"

namespace parley {
namespace {

constexpr std::string_view kMixedSuffix = "_m";

// Of a mixed recipe's blocks, those whose attn_v / ffn_down get more bits:
// the first and last eighth (where quantization error hurts most) and every
// third block in between.
bool sensitive_layer(int32_t layer, int32_t n_layers) {
  const int32_t edge = n_layers / 8;
  if (layer < edge || layer >= n_layers - edge) return true;
  return (layer - edge) % 3 == 2;
}

// The block number in "blk.N.attn_v.weight", or -1.
int32_t layer_of(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return -1;
  return std::atoi(name.c_str() + 4);
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

DType fallback(DType t) {
  switch (t) {
    case DType::Q4_K: return DType::Q4_0;
    case DType::Q5_K: return DType::Q5_0;
    case DType::Q6_K: return DType::Q8_0;
    default: return DType::F16;
  }
}

}  // namespace

std::optional<QuantRecipe> quant_recipe_from_name(std::string_view name) {
  QuantRecipe r;
  r.name = std::string(name);
  std::string_view base = name;
  if (base.size() > kMixedSuffix.size() && (base.ends_with("_m") || base.ends_with("_M"))) {
    base.remove_suffix(kMixedSuffix.size());
    r.mixed = true;
  }
  const auto t = dtype_from_name(base);
  if (!t) return std::nullopt;
  if (r.mixed && *t != DType::Q4_K && *t != DType::Q5_K) return std::nullopt;
  r.base = *t;
  return r;
}

std::string quant_recipe_names() {
  return "f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k, q4_k_m, q5_k_m";
}

bool stays_f32(const std::string& name, const std::vector<uint64_t>& dims) {
  return dims.size() < 2 || ends_with(name, ".ffn_gate_inp.weight");
}

DType tensor_type(const QuantRecipe& recipe, const std::string& name, const std::vector<uint64_t>& dims,
                  int32_t n_layers) {
  if (stays_f32(name, dims)) return DType::F32;
  DType t = recipe.base;
  if (recipe.mixed) {
    const int32_t layer = layer_of(name);
    const bool more_bits = name == "output.weight" ||
                           ((ends_with(name, ".attn_v.weight") || ends_with(name, ".ffn_down.weight") ||
                             ends_with(name, ".ffn_down_exps.weight")) &&
                            layer >= 0 && sensitive_layer(layer, n_layers));
    if (more_bits) t = DType::Q6_K;
  }
  while (dims[0] % uint64_t(traits(t).block_elems) != 0) t = fallback(t);
  return t;
}

std::vector<uint8_t> convert_rows(DType from, const void* src, uint64_t cols, uint64_t rows, DType to) {
  const uint64_t in_row = row_bytes(from, cols), out_row = row_bytes(to, cols);
  std::vector<uint8_t> out(out_row * rows);
  const auto* in = static_cast<const uint8_t*>(src);
  if (from == to) {
    std::memcpy(out.data(), in, out.size());
    return out;
  }
  std::vector<float> row(cols);
  for (uint64_t r = 0; r < rows; ++r) {
    dequantize_row(from, in + r * in_row, row.data(), int64_t(cols));
    quantize_row(to, row.data(), out.data() + r * out_row, int64_t(cols));
  }
  return out;
}

}  // namespace parley
