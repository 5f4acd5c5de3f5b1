#pragma once
// A deliberately naive float64 transformer forward pass, written only for the
// tests: it reads the GGUF metadata and tensors itself (dequantized with the
// format's reference conversions) and recomputes every position from scratch.
#include <string>
#include <vector>

namespace parley::testing {

// Logits (vocab floats) after each of `tokens`, for a llama / qwen2 / qwen3 /
// gemma2 / gemma3 / phi3 GGUF and the mixture-of-experts ones (Mixtral,
// qwen2moe, qwen3moe, olmoe), run with a context of `context` tokens (0: the
// file's training context; it picks Phi-3's long or short rope factors).
// `adapter`: a LoRA adapter GGUF merged into the weights at `adapter_scale`.
std::vector<std::vector<double>> reference_logits(const std::string& gguf_path, const std::vector<int>& tokens,
                                                  int context = 0, const std::string& adapter = "",
                                                  double adapter_scale = 1.0);

}  // namespace parley::testing
