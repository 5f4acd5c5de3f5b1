#pragma once
// Writing LoRA adapter files: random adapters for a base model (tests and
// benchmarks), and merging an adapter into a new copy of its base model.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "model/lora.h"

namespace parley {

struct MkAdapterSpec {
  int32_t rank = 8;
  float alpha = 0.0f;                // adapter.lora.alpha; 0 = the rank (scale 1)
  std::vector<LoraTarget> targets;   // empty: every projection the base has
  DType type = DType::F32;           // F32, F16, BF16 or Q8_0 (Q8_0 where the row length is a multiple of 32, else F32)
  float strength = 0.5f;             // the adapted product's size relative to the base product's
  uint64_t seed = 1;
};

// "attn_q,ffn_down" or "all" -> targets; throws parley::Error on unknown names.
std::vector<LoraTarget> parse_lora_targets(const std::string& list);

// Writes a random adapter for the GGUF base at `base_path`, in llama.cpp's
// adapter format; throws parley::Error on bad specs or I/O failure.
void write_random_adapter(const std::string& base_path, const MkAdapterSpec& spec, const std::string& out_path);

// Writes `base_path` with the adapter merged at `scale`: W + scale * s * B A
// for every adapted matrix, computed in F32 from the dequantized weights and
// stored in the base tensor's type again; everything else is copied.
void merge_lora(const std::string& base_path, const std::string& adapter_path, float scale,
                const std::string& out_path);

}  // namespace parley
