#include "model/expert_router.h"

#include <algorithm>
#include <cmath>

namespace parley {

void route_token(const float* logits, int32_t n_experts, int32_t k, bool norm_top_k, int32_t* ids, float* weights) {
  const float top = *std::max_element(logits, logits + n_experts);
  double total = 0;
  for (int32_t e = 0; e < n_experts; ++e) total += std::exp(double(logits[e] - top));
  // k is small (2 to 8): k scans beat sorting all experts.
  double chosen = 0;
  for (int32_t j = 0; j < k; ++j) {
    int32_t best = -1;
    for (int32_t e = 0; e < n_experts; ++e) {
      if (std::find(ids, ids + j, e) != ids + j) continue;
      if (best < 0 || logits[e] > logits[best]) best = e;
    }
    ids[j] = best;
    const double p = std::exp(double(logits[best] - top)) / total;
    weights[j] = float(p);
    chosen += p;
  }
  if (norm_top_k)
    for (int32_t j = 0; j < k; ++j) weights[j] = float(double(weights[j]) / chosen);
}

}  // namespace parley
