#pragma once
// The generation parameters of an OpenAI-style request body (and of /chat and
// WebSocket requests, which take the same fields), validated.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/request.h"
#include "engine/sampler.h"
#include "serve/api/json_fields.h"
#include "serve/api/structured_output.h"

namespace parley::serve {

struct GenerationParams {
  SamplingParams sampling;  // seed: the request's, else a random one
  bool seeded = false;      // the client gave a seed (choice i then uses seed + i)
  int32_t max_tokens = 0;   // 0: until the end of the context
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool speculative = true;  // false: this request is never speculated on (the output is the same either way)
  int32_t n = 1;
  int32_t top_logprobs = -1;  // -1: no logprobs; 0..20 alternatives per token
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  std::optional<KvRetention> kv_retention;  // unset: the server's default
  int32_t priority = 0;                // vLLM's scale: lower runs first
  int32_t truncate_prompt_tokens = 0;  // > 0: keep only the prompt's last N tokens
  std::string user;                    // the client's end user (logged: Exchange::end_user)
  OutputGrammar output;                // response_format, grammar or tools: set by the route
  // The LoRA adapter the request's "model" names (null: the base model) at
  // lora_scale, and the name answers echo ("": the base's id). Set by
  // select_model (model_choice.h).
  std::shared_ptr<const LoraAdapter> lora;
  float lora_scale = 1.0f;
  std::string model_name;
};

// Under a bounded retention policy a generation may outlast the context
// (docs/kv-policies.md); max_tokens then goes up to this.
constexpr int32_t kMaxTokensPastContext = 1 << 20;

struct ParamLimits {
  int32_t max_n = 8;
  int32_t vocab_size = 0;      // bounds logit_bias keys
  int32_t context_length = 0;  // bounds max_tokens (under the full KV policy) and KV retention sizes
  bool default_retains = false;  // the server's default KV policy is not `full` (no context bound)
  int32_t default_priority = 0;  // the API key's priority: the default, and the most urgent it may ask for
  bool priority_floor = false;   // a request may not ask for a lower `priority` than the default (keyed servers)
};

// Chat takes `logprobs: bool` + `top_logprobs: N`; completions `logprobs: N`.
enum class LogprobsStyle { Chat, Completions };

// Where another API's fields differ from OpenAI's chat: Anthropic's Messages
// names the stop strings `stop_sequences` and bounds `temperature` by 1;
// OpenAI's Responses names the answer's length `max_output_tokens`. (Such
// APIs refuse the fields they do not take before their body comes here.)
struct ParamNames {
  const char* max_tokens = "max_tokens";
  const char* stop = "stop";
  double max_temperature = 2;
};

GenerationParams parse_generation_params(const json& body, const ParamLimits& limits, LogprobsStyle style,
                                         const ParamNames& names = {});
// "priority": lower runs first (vLLM). With API keys, a request may defer
// itself but not run ahead of its key's priority (ParamLimits::default_priority).
int32_t parse_priority(const json& body, const ParamLimits& limits);

}  // namespace parley::serve
