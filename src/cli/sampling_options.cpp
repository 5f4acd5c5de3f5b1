#include "cli/sampling_options.h"

#include <random>
#include <utility>

namespace parley {

void SamplingOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--temp", temperature, "temperature (0 = greedy)")->capture_default_str();
  cmd.add_option("--top-k", top_k, "top-k (0 = off)")->capture_default_str();
  cmd.add_option("--top-p", top_p, "top-p (1 = off)")->capture_default_str();
  cmd.add_option("--min-p", min_p, "min-p (0 = off)")->capture_default_str();
  cmd.add_option("--repeat-penalty", repeat_penalty, "repetition penalty (1 = off)")->capture_default_str();
  cmd.add_option("--frequency-penalty", frequency_penalty, "frequency penalty")->capture_default_str();
  cmd.add_option("--presence-penalty", presence_penalty, "presence penalty")->capture_default_str();
  cmd.add_option("-s,--seed", seed, "random seed (default: random)");
  cmd.add_option("--stop", stop, "stop string (repeatable)");
  cmd.add_flag("--ignore-eos", ignore_eos, "continue past end-of-generation tokens");
}

Request SamplingOptions::request(std::vector<int32_t> prompt, int32_t max_tokens) const {
  Request o;
  o.prompt = std::move(prompt);
  o.sampling.temperature = temperature;
  o.sampling.top_k = top_k;
  o.sampling.top_p = top_p;
  o.sampling.min_p = min_p;
  o.sampling.repetition_penalty = repeat_penalty;
  o.sampling.frequency_penalty = frequency_penalty;
  o.sampling.presence_penalty = presence_penalty;
  o.sampling.seed = seed >= 0 ? uint64_t(seed) : std::random_device{}();
  o.max_tokens = max_tokens;
  o.stop_strings = stop;
  o.ignore_eos = ignore_eos;
  return o;
}

}  // namespace parley
