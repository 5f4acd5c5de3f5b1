#pragma once
// One sequence through the forward pass (BatchForward) on a private KV cache,
// with every position's logits on request: perplexity (`parley eval`) and the
// tests that compare the pass with a reference. No math of its own: generation
// runs on the serving engine (LlmEngine), whatever the number of sequences.
#include <cstdint>
#include <vector>

#include "model/batch_forward.h"

namespace parley {

class SequenceForward {
 public:
  // max_context 0 = the model's training context length.
  SequenceForward(const Model& model, ThreadPool& pool, int32_t max_context = 0, DType kv_type = DType::F32);

  // Appends tokens at positions pos()..pos()+n-1 (in steps of at most 512
  // tokens) and returns the logits of the last one (vocab_size floats, valid
  // until the next call). With `all_logits`, writes n x vocab_size floats too.
  const float* eval(const int32_t* tokens, int32_t n, float* all_logits = nullptr);

  int32_t pos() const { return pos_; }
  int32_t max_context() const { return max_context_; }
  void reset() { pos_ = 0; }
  // The LoRA adapter applied from the next eval() on (null: none).
  void set_lora(const LoraAdapter* adapter, float scale = 1.0f) {
    lora_ = adapter;
    lora_scale_ = scale;
  }

 private:
  int32_t max_context_;
  KvCache cache_;
  std::vector<int32_t> blocks_;
  BatchForward forward_;
  int32_t vocab_;
  int32_t pos_ = 0;
  const LoraAdapter* lora_ = nullptr;
  float lora_scale_ = 1.0f;
};

}  // namespace parley
