#pragma once
// The transformer forward pass for one sequence, with its KV cache. One code
// path for every architecture, parameterised by ModelConfig (GQA, QKV bias,
// per-head QK norm, RoPE style and scaling, sliding-window attention).
#include <cstdint>
#include <vector>

#include "kernels/thread_pool.h"
#include "model/model.h"
#include "model/rope.h"

namespace parley {

class Forward {
 public:
  // max_context 0 = the model's training context length; larger values are
  // allowed (as llama.cpp's n_ctx). Buffers are allocated here, never per token.
  Forward(const Model& model, ThreadPool& pool, int32_t max_context = 0);

  // Appends tokens at positions pos()..pos()+n-1 (split into chunks for
  // prefill) and returns the logits of the last one (vocab_size floats, valid
  // until the next call). With `all_logits`, writes n x vocab_size floats too.
  const float* eval(const int32_t* tokens, int32_t n, float* all_logits = nullptr);

  int32_t pos() const { return pos_; }
  int32_t max_context() const { return max_context_; }
  void truncate(int32_t pos);  // forget positions >= pos (pos <= pos())
  void reset() { truncate(0); }

 private:
  void eval_chunk(const int32_t* tokens, int32_t n, float* all_logits);
  void attention(int32_t layer, int32_t n);
  void feed_forward(const LayerWeights& lw, int32_t n);
  void logits(const float* x, int32_t n, float* out);
  float* kv_row(int32_t layer, int32_t kind, int32_t head, int32_t pos);  // kind 0: K, 1: V

  const Model& model_;
  const ModelConfig& c_;
  ThreadPool& pool_;
  Rope rope_;
  int32_t max_context_;
  int32_t chunk_;
  int32_t pos_ = 0;
  std::vector<float> kv_;  // [layer][k|v][kv head][position][head_dim]
  std::vector<float> x_, xb_, q_, k_, v_, att_, gate_, up_, last_logits_;
};

}  // namespace parley
