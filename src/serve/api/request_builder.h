#pragma once
// Engine requests from validated parameters and tokenised prompts: n choices
// per prompt (seeds seed, seed + 1, ...), max_tokens defaulting to the rest
// of the context, prompts that cannot fit refused with a 400.
#include <cstdint>
#include <vector>

#include "engine/request.h"
#include "serve/api/generation_params.h"

namespace parley::serve {

struct EngineRequests {
  std::vector<Request> requests;     // prompt-major: prompt p's choice j at p * n + j
  std::vector<size_t> prompt_index;  // per request
};

EngineRequests build_requests(const GenerationParams& params, const std::vector<std::vector<int32_t>>& prompts,
                              int32_t context_length);

}  // namespace parley::serve
