#include "model/quant_recipe.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "kernels/quant.h"
#include "util/error.h"

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
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::IQ4_XS: return DType::IQ4_NL;
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
  const bool has_mix = *t == DType::Q2_K || *t == DType::Q3_K || *t == DType::Q4_K || *t == DType::Q5_K;
  if (r.mixed && !has_mix) return std::nullopt;
  r.base = *t;
  return r;
}

std::string quant_recipe_names() {
  return "f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs, "
         "q2_k_m, q3_k_m, q4_k_m, q5_k_m";
}

DType planned_type(const QuantRecipe& recipe, const std::string& name, const std::vector<uint64_t>& dims,
                   int32_t n_layers) {
  if (stays_f32(name, dims)) return DType::F32;
  if (!recipe.mixed) return recipe.base;
  if (name == "output.weight") return DType::Q6_K;
  const int32_t layer = layer_of(name);
  // ffn_down, ffn_down_exps, and an early Mixtral file's per-expert ffn_down.E.
  const bool attn_v = ends_with(name, ".attn_v.weight"), ffn_down =
      name.find(".ffn_down.") != std::string::npos || ends_with(name, ".ffn_down_exps.weight");
  const bool attn_out = ends_with(name, ".attn_output.weight");
  switch (recipe.base) {
    case DType::Q3_K:  // llama.cpp's Q3_K_M
      if (attn_v) return layer >= 0 && layer < 2 ? DType::Q5_K : DType::Q4_K;
      if (ffn_down) return layer >= 0 && layer < n_layers / 16 ? DType::Q5_K : DType::Q4_K;
      if (attn_out) return DType::Q4_K;
      return DType::Q3_K;
    case DType::Q2_K: {  // llama.cpp's Q2_K; attn_v's rows / columns is the heads per KV head
      const bool gqa4 = dims[1] > 0 && dims[0] / dims[1] >= 4;
      if (attn_v) return gqa4 ? DType::Q4_K : DType::Q3_K;
      if (ffn_down || attn_out) return DType::Q3_K;
      return DType::Q2_K;
    }
    default:  // Q4_K_M, Q5_K_M
      if ((attn_v || ffn_down) && layer >= 0 && sensitive_layer(layer, n_layers)) return DType::Q6_K;
      return recipe.base;
  }
}

bool stays_f32(const std::string& name, const std::vector<uint64_t>& dims) {
  return dims.size() < 2 || ends_with(name, ".ffn_gate_inp.weight");
}

DType tensor_type(const QuantRecipe& recipe, const std::string& name, const std::vector<uint64_t>& dims,
                  int32_t n_layers) {
  DType t = planned_type(recipe, name, dims, n_layers);
  while (dims.size() >= 2 && dims[0] % uint64_t(traits(t).block_elems) != 0) t = fallback(t);
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
  if (cols % uint64_t(traits(from).block_elems) != 0 || cols % uint64_t(traits(to).block_elems) != 0)
    throw Error("convert: rows of " + std::to_string(cols) + " are not whole blocks of " +
                std::string(dtype_name(from)) + " and " + std::string(dtype_name(to)));
  const auto convert = [&](uint64_t r0, uint64_t r1) {
    std::vector<float> row(cols);
    for (uint64_t r = r0; r < r1; ++r) {
      dequantize_row(from, in + r * in_row, row.data(), int64_t(cols));
      quantize_row(to, row.data(), out.data() + r * out_row, int64_t(cols));
    }
  };
  // Rows are independent: split them over the cores (the low-bit types'
  // scale searches take minutes on one core for a 500M-parameter model).
  const uint64_t n = std::clamp<uint64_t>(std::thread::hardware_concurrency(), 1, rows / 64 + 1);
  std::vector<std::thread> threads;
  for (uint64_t i = 1; i < n; ++i) threads.emplace_back(convert, rows * i / n, rows * (i + 1) / n);
  convert(0, rows / n);
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace parley
