#pragma once
// Engine events the serve tests feed to the formatting code.
#include <cstdint>
#include <string>
#include <utility>

#include "engine/request.h"

namespace parley::serve::test {

// A token with its log-probability and one alternative (token 3).
inline Event token_event(int32_t token, std::string text, float logprob = -0.5f) {
  Event e;
  e.token = token;
  e.text = std::move(text);
  e.logprob = logprob;
  e.top_logprobs = {{token, logprob}, {3, -2.0f}};
  return e;
}

}  // namespace parley::serve::test
