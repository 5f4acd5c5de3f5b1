#pragma once
// Writing models: `parley quantize` (a GGUF re-encoded tensor by tensor, all
// metadata kept) and `parley convert` (a loaded model, e.g. a llama2.c
// checkpoint + tokenizer.bin, written as a Llama GGUF).
#include <cstdint>
#include <string>

#include "model/model.h"
#include "model/quant_recipe.h"

namespace parley {

struct WriteReport {
  uint64_t in_bytes = 0, out_bytes = 0;  // tensor data
  int32_t tensors = 0, fallbacks = 0;    // fallbacks: matrices whose rows the recipe's type could not encode
};

// general.file_type (the llama.cpp "ftype" numbering) of a recipe.
uint32_t file_type_of(const QuantRecipe& recipe);

WriteReport quantize_gguf(const std::string& in_path, const std::string& out_path, const QuantRecipe& recipe);
// Llama-architecture models only (what llama2.c checkpoints hold).
WriteReport convert_to_gguf(const Model& model, const std::string& out_path, const QuantRecipe& recipe);

}  // namespace parley
