#pragma once
// Log-probabilities for the API's logprobs: log-softmax of a logits row.
#include <cstdint>
#include <vector>

#include "engine/request.h"

namespace parley {

// Returns the log-probability of `chosen` and fills `top` with the n most
// likely tokens, best first (ties: lower id first).
float token_logprobs(const float* logits, int32_t vocab, int32_t chosen, int32_t n, std::vector<TokenLogprob>& top);

}  // namespace parley
