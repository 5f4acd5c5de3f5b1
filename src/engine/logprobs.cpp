#include "engine/logprobs.h"

#include <algorithm>
#include <cmath>

namespace parley {

float token_logprobs(const float* logits, int32_t vocab, int32_t chosen, int32_t n, std::vector<TokenLogprob>& top) {
  const float max = *std::max_element(logits, logits + vocab);
  double sum = 0;
  for (int32_t i = 0; i < vocab; ++i) sum += std::exp(double(logits[i]) - double(max));
  const double lse = double(max) + std::log(sum);
  auto better = [](const TokenLogprob& a, const TokenLogprob& b) {
    return a.logprob > b.logprob || (a.logprob == b.logprob && a.token < b.token);
  };
  // A heap of the best n seen so far, worst on top.
  top.clear();
  n = std::min(n, vocab);
  for (int32_t i = 0; i < vocab && n > 0; ++i) {
    const TokenLogprob t{i, logits[i]};
    if (int32_t(top.size()) < n) {
      top.push_back(t);
      std::push_heap(top.begin(), top.end(), better);
    } else if (better(t, top.front())) {
      std::pop_heap(top.begin(), top.end(), better);
      top.back() = t;
      std::push_heap(top.begin(), top.end(), better);
    }
  }
  std::sort_heap(top.begin(), top.end(), better);
  for (auto& t : top) t.logprob = float(double(t.logprob) - lse);
  return float(double(logits[chosen]) - lse);
}

}  // namespace parley
