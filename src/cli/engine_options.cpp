#include "cli/engine_options.h"

#include <fstream>

#include "model/model.h"
#include "util/error.h"

namespace parley {

void add_step_options(CLI::App& cmd, EngineConfig& c) {
  cmd.add_option("--max-running", c.max_running, "sequences decoded together at most")->capture_default_str();
  cmd.add_option("--max-batch-tokens", c.max_batch_tokens,
                 "tokens per engine step (smaller: steadier token stream, slower first tokens under bursts)")
      ->capture_default_str();
  cmd.add_option("--max-step-ms", c.max_step_ms,
                 "step-time target: every decode, then only the prefill tokens predicted to fit with a margin of "
                 "twice the prediction's recent error (0 = off; about the inter-token P99 you want)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
}

void add_kv_retention_options(CLI::App& cmd, std::string& policy, KvRetention& r) {
  cmd.add_option("--kv-policy", policy, "KV retention: full, window, sink or heavy-hitter (requests may set their own)")
      ->capture_default_str();
  cmd.add_option("--kv-window", r.window, "window/sink/heavy-hitter: recent tokens kept")->capture_default_str();
  cmd.add_option("--kv-sink", r.sink, "sink/heavy-hitter: first tokens kept")->capture_default_str();
  cmd.add_option("--kv-heavy", r.heavy, "heavy-hitter: most-attended tokens kept")->capture_default_str();
}

KvPolicy parse_kv_policy(const std::string& name) {
  const auto p = kv_policy_from_name(name);
  if (!p) throw Error("--kv-policy: '" + name + "' is not full, window, sink or heavy-hitter");
  return *p;
}

void add_kv_type_option(CLI::App& cmd, std::string& type) {
  cmd.add_option("--kv-type", type, "KV cache element type: f32, f16 or q8_0")->capture_default_str();
}

DType parse_kv_type(const std::string& name) {
  const auto t = dtype_from_name(name);  // the engine refuses types other than f32, f16 and q8_0
  if (!t) throw Error("--kv-type: '" + name + "' is not f32, f16 or q8_0");
  return *t;
}

void SpecOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--spec", mode,
                 "speculative decoding: off (default), ngram (drafts from the prompt and output so far, verified in one "
                 "step; same output, faster when the text repeats itself and the host is not saturated), or draft "
                 "(drafts from --draft-model)");
  cmd.add_option("--draft-model", draft_model,
                 "a smaller model with the same vocabulary that drafts tokens for speculative decoding (implies --spec "
                 "draft); under serve the same file as --fallback-model is loaded once");
  cmd.add_option("--spec-tokens", tokens, "speculation: drafted tokens per sequence and step at most (1-16)")
      ->capture_default_str();
  // For measurements: every step drafts --spec-tokens, whatever it costs; and the oracle drafter.
  cmd.add_flag("--spec-fixed", fixed)->group("");
  cmd.add_option("--spec-oracle", oracle)->group("");
}

void SpecOptions::apply(EngineConfig& c) const {
  if (!oracle.empty()) {
    std::ifstream in(oracle);
    if (!in) throw Error("--spec-oracle: cannot read " + oracle);
    c.spec.oracle.clear();
    for (int32_t t; in >> t;) c.spec.oracle.push_back(t);
    c.spec.mode = SpecMode::Oracle;
  } else if (mode == "draft" || (mode.empty() && !draft_model.empty())) {
    if (draft_model.empty()) throw Error("--spec draft: give the draft model with --draft-model FILE");
    c.spec.mode = SpecMode::Draft;
    c.spec.draft = Model::load(draft_model);
  } else if (mode == "ngram" || mode == "off" || mode.empty()) {
    if (!draft_model.empty()) throw Error("--draft-model drafts only under --spec draft, not --spec " + mode);
    c.spec.mode = mode == "ngram" ? SpecMode::Ngram : SpecMode::Off;
  } else {
    throw Error("--spec: '" + mode + "' is not off, ngram or draft");
  }
  c.spec.max_tokens = tokens;
  c.spec.adaptive = !fixed;
}

void LocalEngineOptions::add_to(CLI::App& cmd) {
  cmd.add_option("-c,--ctx", context, "context length (default: the model's)");
  add_kv_type_option(cmd, kv_type);
  spec.add_to(cmd);
}

EngineConfig LocalEngineOptions::config(int threads) const {
  EngineConfig c;
  c.threads = threads;
  c.max_context = context;
  c.kv_type = parse_kv_type(kv_type);
  c.max_running = 1;
  spec.apply(c);
  return c;
}

}  // namespace parley
