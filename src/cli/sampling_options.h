#pragma once
// Sampling and stop flags shared by `generate` and `chat`.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "engine/request.h"

namespace parley {

struct SamplingOptions {
  float temperature = 0.8f;
  int32_t top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float repeat_penalty = 1.0f;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  int64_t seed = -1;  // -1: random
  std::vector<std::string> stop;
  bool ignore_eos = false;

  void add_to(CLI::App& cmd);
  // A request for `prompt` with these settings and at most max_tokens new tokens.
  Request request(std::vector<int32_t> prompt, int32_t max_tokens) const;
};

}  // namespace parley
