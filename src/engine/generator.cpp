#include "engine/generator.h"

#include <algorithm>
#include <chrono>

#include "util/error.h"

namespace parley {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Generator::Generator(const Model& model, ThreadPool& pool, int32_t max_context)
    : model_(model), forward_(model, pool, max_context) {}

// Re-uses the cached prefix shared with `prompt`; at least the last prompt
// token is evaluated so that its logits are fresh.
const float* Generator::prefill(const std::vector<int32_t>& prompt, GenerateResult& r) {
  const size_t limit = std::min(history_.size(), prompt.size() - 1);
  size_t common = 0;
  while (common < limit && history_[common] == prompt[common]) ++common;
  forward_.truncate(int32_t(common));
  history_.assign(prompt.begin(), prompt.end());
  r.prefilled_tokens = int32_t(prompt.size() - common);
  return forward_.eval(prompt.data() + common, r.prefilled_tokens);
}

GenerateResult Generator::run(const std::vector<int32_t>& prompt, const GenerateOptions& opts,
                              const TokenCallback& on_token) {
  if (prompt.empty()) throw Error("generate: the prompt has no tokens");
  if (int32_t(prompt.size()) >= forward_.max_context())
    throw Error("generate: prompt of " + std::to_string(prompt.size()) + " tokens does not fit the context of " +
                std::to_string(forward_.max_context()));
  const Tokenizer& tok = model_.tokenizer();
  GenerateResult r;
  r.prompt_tokens = int32_t(prompt.size());
  Sampler sampler(opts.sampling, model_.config().vocab_size);
  for (int32_t id : prompt) sampler.accept(id);
  StreamingDetokenizer detok(tok, false, prompt.back());
  StopStringMatcher stops(opts.stop_strings);

  auto t0 = std::chrono::steady_clock::now();
  std::vector<float> logits_copy(size_t(model_.config().vocab_size));
  const float* logits = prefill(prompt, r);
  r.prefill_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();

  auto emit = [&](const std::string& text, int32_t token) {
    if (text.empty()) return true;
    r.text += text;
    return !on_token || on_token(text, token);
  };
  r.finish = FinishReason::Length;
  while (int32_t(r.tokens.size()) < opts.max_tokens) {
    std::copy_n(logits, logits_copy.size(), logits_copy.data());
    const int32_t id = sampler.sample(logits_copy.data());
    const bool eog = !opts.ignore_eos && tok.is_eog(id);
    if (eog || std::find(opts.stop_ids.begin(), opts.stop_ids.end(), id) != opts.stop_ids.end()) {
      r.finish = FinishReason::Stop;
      break;
    }
    sampler.accept(id);
    r.tokens.push_back(id);
    const std::string text = stops.push(detok.push(id));
    if (!emit(text, id) || stops.stopped()) {
      r.finish = FinishReason::Stop;
      break;
    }
    // The last token's logits are only needed if another token may follow.
    if (int32_t(r.tokens.size()) >= opts.max_tokens || forward_.pos() >= forward_.max_context()) break;
    history_.push_back(id);
    logits = forward_.eval(&id, 1);
  }
  if (!stops.stopped()) emit(stops.push(detok.flush()) + stops.flush(), -1);
  // The last sampled token was never evaluated: keep history == cached K/V.
  history_.resize(size_t(forward_.pos()));
  r.decode_ms = ms_since(t0);
  return r;
}

}  // namespace parley
