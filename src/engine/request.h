#pragma once
// A generation request for the serving engine (LlmEngine) and the events that
// stream its results back. Lifecycle: waiting -> running -> finished, with
// exactly one final event whose finish reason is stop, length, cancelled,
// deadline or error.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampler.h"
#include "engine/stop.h"
#include "model/config.h"
#include "model/lora.h"

namespace parley {
namespace grammar {
class Grammar;
}

using RequestId = uint64_t;

// Which K/V entries a sequence keeps (docs/kv-policies.md). Under every policy
// but Full the cache is bounded and generation may continue past the context.
enum class KvPolicy {
  Full,         // every token (bounded by the context)
  Window,       // the last `window` tokens
  Sink,         // StreamingLLM: the first `sink` tokens and the last `window`
  HeavyHitter,  // H2O: `sink` first tokens, the `heavy` most attended, the last `window`
};

struct KvRetention {
  KvPolicy policy = KvPolicy::Full;
  int32_t window = 256;  // recent tokens kept (Window, Sink, HeavyHitter)
  int32_t sink = 4;      // first tokens kept (Sink, HeavyHitter)
  int32_t heavy = 64;    // most-attended tokens kept (HeavyHitter)
};
const char* kv_policy_name(KvPolicy p);                   // "full", "window", "sink", "heavy-hitter"
std::optional<KvPolicy> kv_policy_from_name(const std::string& name);

struct Request {
  std::vector<int32_t> prompt;            // token ids, BOS included when wanted
  SamplingParams sampling;
  int32_t max_tokens = 256;               // new tokens at most; also bounded by the context
  std::vector<int32_t> stop_ids;          // extra stop tokens (not emitted)
  std::vector<std::string> stop_strings;  // never emitted, even in part
  bool ignore_eos = false;                // keep going past end-of-generation tokens
  int32_t priority = 0;                   // higher is served first
  // Unfinished at this time: final event with FinishReason::Deadline.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // -1: no log-probabilities; N >= 0: the chosen token's and the top N
  // (log-softmax of the penalised logits, before temperature).
  int32_t top_logprobs = -1;
  std::optional<KvRetention> kv_retention;  // unset: EngineConfig::kv_retention
  // Not None: an embedding request. The prompt is evaluated (never from the
  // prefix cache: its hidden states are needed), nothing is generated, and
  // the final event (FinishReason::Stop) carries the pooled hidden state.
  Pooling pooling = Pooling::None;
  // Not null: the output is kept a match of this grammar (engine/grammar),
  // end-of-generation allowed only where the grammar may end, and the
  // request stops when nothing may follow. With triggers it applies only
  // from the first trigger text in the output on (lazy tool calls).
  std::shared_ptr<const grammar::Grammar> grammar;
  std::vector<std::string> grammar_triggers;
  // False: never speculated on, even when the engine speculates
  // (EngineConfig::spec). Speculation changes no token, only the speed.
  bool speculative = true;
  // Not null: the LoRA adapter the request runs with (of this engine's
  // model), at alpha / rank times lora_scale. Batched with other adapters and
  // the base; no prefix-cache block is shared across adapters.
  std::shared_ptr<const LoraAdapter> lora;
  float lora_scale = 1.0f;
};

struct TokenLogprob {
  int32_t token = -1;
  float logprob = 0.0f;
};

// One per generated token, then one final event. Delivered on the engine
// thread: a sink must not block (hand the event over to another thread).
struct Event {
  RequestId id = 0;
  int32_t token = -1;          // the generated token; -1 in the final event
  std::string text;            // text now safe to show (may be empty: an
                               // unfinished UTF-8 character or a possible stop string is held)
  float logprob = 0.0f;        // of `token`, when top_logprobs >= 0
  std::vector<TokenLogprob> top_logprobs;  // best first
  bool final = false;
  FinishReason finish = FinishReason::None;  // set in the final event
  std::string error;           // FinishReason::Error: what was wrong
  std::string stop_string;     // FinishReason::Stop by a stop string: which one
  // Usage, in the final event: prompt tokens, generated tokens, and prompt
  // tokens whose K/V came from the prefix cache.
  int32_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
  // When an engine step first ran the request (epoch: never): the end of its queue wait.
  std::chrono::steady_clock::time_point scheduled{};
  std::vector<float> embedding;  // embedding requests' final event: dim floats, not normalised
};

using EventSink = std::function<void(const Event&)>;

}  // namespace parley
