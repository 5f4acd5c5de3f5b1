#pragma once
// Generation for one sequence: prefill, then sample token by token until a
// stop condition, streaming text through a callback. Keeps its KV cache
// between calls and re-uses the longest common prefix of the token history
// (a multi-turn chat only prefills the new turn).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sampler.h"
#include "engine/stop.h"
#include "model/forward.h"

namespace parley {

struct GenerateOptions {
  SamplingParams sampling;
  int32_t max_tokens = 256;               // new tokens at most; also bounded by the context
  std::vector<int32_t> stop_ids;          // extra stop tokens
  std::vector<std::string> stop_strings;  // never emitted, even in part
  bool ignore_eos = false;                // keep going past end-of-generation tokens
};

struct GenerateResult {
  std::vector<int32_t> tokens;  // generated ids (stop tokens excluded)
  std::string text;             // emitted text
  FinishReason finish = FinishReason::None;
  int32_t prompt_tokens = 0;
  int32_t prefilled_tokens = 0;  // prompt tokens actually evaluated (rest re-used)
  double prefill_ms = 0, decode_ms = 0;
};

// Receives each newly emitted piece of text and the token that completed it;
// returns false to stop generating (finish reason Stop).
using TokenCallback = std::function<bool(std::string_view text, int32_t token)>;

class Generator {
 public:
  Generator(const Model& model, ThreadPool& pool, int32_t max_context = 0);
  GenerateResult run(const std::vector<int32_t>& prompt, const GenerateOptions& opts,
                     const TokenCallback& on_token = {});
  // Tokens whose K/V are in the cache (prompt and generated so far).
  const std::vector<int32_t>& history() const { return history_; }
  const Forward& forward() const { return forward_; }

 private:
  const float* prefill(const std::vector<int32_t>& prompt, GenerateResult& r);
  const Model& model_;
  Forward forward_;
  std::vector<int32_t> history_;
};

}  // namespace parley
