#include "serve/api/generation_params.h"

#include <random>
#include <string>

#include "serve/transport/api_error.h"
#include "serve/protection/auth.h"
#include "serve/api/kv_retention_param.h"

namespace parley::serve {
namespace {

constexpr size_t kMaxStops = 16;

std::vector<std::string> parse_stop(const json& body, const std::string& name) {
  const json* f = get_field(body, name.c_str());
  if (!f) return {};
  if (f->is_string()) return f->get<std::string>().empty() ? std::vector<std::string>{} : std::vector{f->get<std::string>()};
  if (!f->is_array() || f->size() > kMaxStops)
    throw invalid_request("'" + name + "' must be a string or an array of at most " + std::to_string(kMaxStops) +
                              " strings",
                          name, "invalid_type");
  std::vector<std::string> out;
  for (const json& s : *f) {
    if (!s.is_string()) throw invalid_request("'" + name + "' entries must be strings", name, "invalid_type");
    if (!s.get<std::string>().empty()) out.push_back(s.get<std::string>());
  }
  return out;
}

std::vector<std::pair<int32_t, float>> parse_logit_bias(const json& body, int32_t vocab_size) {
  const json* f = get_field(body, "logit_bias");
  if (!f) return {};
  if (!f->is_object()) throw invalid_request("'logit_bias' must be an object of token id -> bias", "logit_bias", "invalid_type");
  std::vector<std::pair<int32_t, float>> out;
  for (const auto& [key, value] : f->items()) {
    size_t used = 0;
    long id = -1;
    try {
      id = std::stol(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || id < 0 || id >= vocab_size)
      throw invalid_request("'logit_bias' key '" + key + "' is not a token id of this model", "logit_bias", "out_of_range");
    if (!value.is_number() || value.get<double>() < -100 || value.get<double>() > 100)
      throw invalid_request("'logit_bias' values must be numbers in [-100, 100]", "logit_bias", "out_of_range");
    out.emplace_back(int32_t(id), value.get<float>());
  }
  return out;
}

int32_t parse_logprobs(const json& body, LogprobsStyle style) {
  if (style == LogprobsStyle::Completions) return int32_t(get_integer(body, "logprobs", 0, 5).value_or(-1));
  const bool on = get_bool(body, "logprobs").value_or(false);
  const auto top = get_integer(body, "top_logprobs", 0, 20);
  if (top && !on) throw invalid_request("'top_logprobs' requires 'logprobs': true", "top_logprobs");
  return on ? int32_t(top.value_or(0)) : -1;
}

uint64_t random_seed() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

void parse_sampling(const json& body, const ParamLimits& limits, double max_temperature, GenerationParams& p) {
  SamplingParams& s = p.sampling;
  s.temperature = float(get_number(body, "temperature", {0, max_temperature}).value_or(1.0));
  s.top_p = float(get_number(body, "top_p", {0, 1, true}).value_or(1.0));
  s.top_k = int32_t(get_integer(body, "top_k", 0, limits.vocab_size).value_or(0));
  s.min_p = float(get_number(body, "min_p", {0, 1}).value_or(0.0));
  s.presence_penalty = float(get_number(body, "presence_penalty", {-2, 2}).value_or(0.0));
  s.frequency_penalty = float(get_number(body, "frequency_penalty", {-2, 2}).value_or(0.0));
  s.repetition_penalty = float(get_number(body, "repetition_penalty", {0, 10, true}).value_or(1.0));
  s.logit_bias = parse_logit_bias(body, limits.vocab_size);
  const auto seed = get_integer(body, "seed", INT64_MIN, INT64_MAX);
  p.seeded = seed.has_value();
  s.seed = seed ? uint64_t(*seed) : random_seed();
}

}  // namespace

int32_t parse_priority(const json& body, const ParamLimits& limits) {
  const auto p = get_integer(body, "priority", -kMaxPriority, kMaxPriority);
  if (!p) return limits.default_priority;
  if (limits.priority_floor && *p < limits.default_priority)
    throw invalid_request("'priority' must be at least " + std::to_string(limits.default_priority) +
                              " (this API key's priority; lower runs first)",
                          "priority", "invalid_value");
  return int32_t(*p);
}

GenerationParams parse_generation_params(const json& body, const ParamLimits& limits, LogprobsStyle style,
                                         const ParamNames& names) {
  GenerationParams p;
  parse_sampling(body, limits, names.max_temperature, p);
  p.kv_retention = parse_kv_retention(body, limits.context_length);
  const bool bounded = p.kv_retention ? p.kv_retention->policy != KvPolicy::Full : limits.default_retains;
  const int64_t most_tokens = bounded ? kMaxTokensPastContext : limits.context_length;
  const auto max_completion = get_integer(body, "max_completion_tokens", 1, most_tokens);
  const auto max_tokens = get_integer(body, names.max_tokens, 1, most_tokens);
  p.max_tokens = int32_t(max_completion ? *max_completion : max_tokens.value_or(0));
  p.stop = parse_stop(body, names.stop);
  p.ignore_eos = get_bool(body, "ignore_eos").value_or(false);
  p.speculative = get_bool(body, "speculative").value_or(true);
  p.n = int32_t(get_integer(body, "n", 1, limits.max_n).value_or(1));
  p.top_logprobs = parse_logprobs(body, style);
  p.stream = get_bool(body, "stream").value_or(false);
  if (const json* so = get_field(body, "stream_options")) {
    if (!so->is_object()) throw invalid_request("'stream_options' must be an object", "stream_options", "invalid_type");
    p.include_usage = get_bool(*so, "include_usage").value_or(false);
  }
  p.priority = parse_priority(body, limits);
  p.truncate_prompt_tokens = int32_t(get_integer(body, "truncate_prompt_tokens", 1, limits.context_length).value_or(0));
  p.user = get_string(body, "user").value_or("");
  return p;
}

}  // namespace parley::serve
