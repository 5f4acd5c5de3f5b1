#pragma once
// One request run to its end on an engine, its text handed to the calling
// thread as it comes: how `generate`, `chat` and `bench` generate, through
// the same engine (scheduler, paged KV cache, prefix cache, sampler,
// detokenizer) that `serve` runs.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/llm_engine.h"

namespace parley {

struct RequestResult {
  std::vector<int32_t> tokens;  // generated ids (stop tokens excluded)
  std::string text;             // emitted text
  FinishReason finish = FinishReason::None;
  int32_t prompt_tokens = 0;
  int32_t cached_tokens = 0;    // prompt tokens whose K/V came from the prefix cache
  // Since submit(), as the engine thread emitted them: the first token (queue
  // wait, prefill, one sample) and the last.
  double first_token_ms = 0, last_token_ms = 0;

  int32_t prefilled_tokens() const { return prompt_tokens - cached_tokens; }
  // Tokens per second after the first (whose logits came from the prefill).
  double decode_tok_s() const;
};

// Receives each newly emitted piece of text, on the calling thread.
using TextCallback = std::function<void(std::string_view text)>;

// Throws parley::Error when the engine answers with an error.
RequestResult run_request(LlmEngine& engine, Request request, const TextCallback& on_text = {});

}  // namespace parley
