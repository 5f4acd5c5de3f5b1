#include "serve/api/request_builder.h"

#include <string>

#include "serve/transport/api_error.h"

namespace parley::serve {
namespace {

Request make_request(const GenerationParams& p, std::vector<int32_t> prompt, int32_t context_length) {
  if (prompt.empty()) throw invalid_request("The prompt is empty", "prompt");
  if (p.truncate_prompt_tokens > 0 && prompt.size() > size_t(p.truncate_prompt_tokens))
    prompt.erase(prompt.begin(), prompt.end() - p.truncate_prompt_tokens);  // keeps the end, as vLLM
  if (int64_t(prompt.size()) >= context_length)
    throw invalid_request("The prompt has " + std::to_string(prompt.size()) + " tokens; this model's context is " +
                              std::to_string(context_length) + " tokens",
                          "messages", "context_length_exceeded");
  Request r;
  r.prompt = std::move(prompt);
  r.priority = -p.priority;  // the engine runs higher first
  r.sampling = p.sampling;
  r.max_tokens = p.max_tokens > 0 ? p.max_tokens : context_length - int32_t(r.prompt.size());
  r.stop_strings = p.stop;
  r.ignore_eos = p.ignore_eos;
  r.speculative = p.speculative;
  r.top_logprobs = p.top_logprobs;
  r.kv_retention = p.kv_retention;
  r.grammar = p.output.grammar;
  r.grammar_triggers = p.output.triggers;
  r.lora = p.lora;
  r.lora_scale = p.lora_scale;
  return r;
}

}  // namespace

EngineRequests build_requests(const GenerationParams& params, const std::vector<std::vector<int32_t>>& prompts,
                              int32_t context_length) {
  EngineRequests out;
  for (size_t p = 0; p < prompts.size(); ++p) {
    const Request base = make_request(params, prompts[p], context_length);
    for (int32_t j = 0; j < params.n; ++j) {
      out.requests.push_back(base);
      out.requests.back().sampling.seed = params.sampling.seed + uint64_t(j);
      out.prompt_index.push_back(p);
    }
  }
  return out;
}

}  // namespace parley::serve
