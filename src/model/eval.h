#pragma once
// Quality of a model on a text (`parley eval`): perplexity, and how closely a
// quantized model's next-token distributions follow a reference's (KL
// divergence, top-1 agreement, cosine similarity of the logits).
//
// The tokens are scored in windows of `window` tokens, each evaluated from an
// empty cache; consecutive windows overlap by one token so that every token
// after the first is predicted exactly once.
#include <cstdint>
#include <vector>

#include "kernels/thread_pool.h"
#include "model/lora.h"
#include "model/model.h"

namespace parley {

struct PerplexityResult {
  int64_t tokens = 0;  // predictions scored
  double nll = 0;      // sum of -log p(token)
  double perplexity() const;
};

struct CompareResult {
  PerplexityResult ref, test;
  int64_t tokens = 0;
  double kl_mean = 0, kl_max = 0;  // KL(ref || test) per predicted position, nats
  double top1_agreement = 0;       // fraction of positions whose argmax is the same
  double cosine_mean = 0;          // of the two logit vectors
};

// window 0 = the model's context length; `lora`: an adapter to run the model with.
PerplexityResult perplexity(const Model& model, const std::vector<int32_t>& tokens, int32_t window,
                            ThreadPool& pool, LoraUse lora = {});
// The models must share the vocabulary (same size); throws parley::Error otherwise.
CompareResult compare_models(const Model& ref, const Model& test, const std::vector<int32_t>& tokens,
                             int32_t window, ThreadPool& pool);

}  // namespace parley
