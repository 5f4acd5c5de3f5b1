#include "serve/ops/metrics.h"

#include <sstream>

namespace parley::serve {
namespace {

struct Metric {
  const char* name;  // also the /v1/stats key
  const char* type;  // "gauge" or "counter"
  const char* help;
  int64_t value;
};

std::vector<Metric> collect(const ApiContext& ctx) {
  const EngineStats s = ctx.engine.stats();
  const ServerState& st = ctx.state;
  const ServeMetrics& m = ctx.metrics;
  const state::CacheStats* cache = ctx.services.response_cache ? &ctx.services.response_cache->stats() : nullptr;
  const state::FailoverStats* fallback = ctx.services.failover.get();
  const LoraCounters lora = ctx.adapters->counters();
  return {
      {"waiting", "gauge", "Requests waiting for the engine", int64_t(s.waiting)},
      {"running", "gauge", "Sequences being decoded", int64_t(s.running)},
      {"kv_blocks_total", "gauge", "KV cache blocks in the pool", int64_t(s.kv_blocks_total)},
      {"kv_blocks_used", "gauge", "KV cache blocks held by sequences", int64_t(s.kv_blocks_used)},
      {"kv_blocks_cached", "gauge", "Free KV blocks kept for prefix reuse", int64_t(s.kv_blocks_cached)},
      {"kv_blocks_committed", "gauge", "KV cache blocks whose memory is resident (the pool's share of RSS)", int64_t(s.kv_blocks_committed)},
      {"prefix_cache_hit_tokens", "counter", "Prompt tokens found in the prefix cache", int64_t(s.prefix_cache_hit_tokens)},
      {"prefix_cache_query_tokens", "counter", "Prompt tokens looked up in the prefix cache", int64_t(s.prefix_cache_query_tokens)},
      {"requests_finished", "counter", "Engine requests finished", int64_t(s.requests_finished)},
      {"requests_cancelled", "counter", "Engine requests cancelled", int64_t(s.requests_cancelled)},
      {"requests_failed", "counter", "Engine requests failed", int64_t(s.requests_failed)},
      {"preemptions", "counter", "Sequences preempted for KV memory", int64_t(s.preemptions)},
      {"prompt_tokens", "counter", "Prompt tokens processed", int64_t(s.prompt_tokens)},
      {"generated_tokens", "counter", "Tokens generated", int64_t(s.generated_tokens)},
      {"steps", "counter", "Engine steps", int64_t(s.steps)},
      {"step_time_us", "counter", "Microseconds the engine spent in steps (scheduling, forward pass, sampling)", int64_t(s.step_us)},
      {"prefill_budget", "gauge", "Prefill tokens the last engine step allowed (--max-step-ms's fit, else --max-batch-tokens)", int64_t(s.prefill_budget)},
      {"step_error_us", "gauge", "RMS of the step-time fit's recent prediction errors, microseconds (--max-step-ms keeps twice this free)", s.step_error_us},
      // Speculative decoding (--spec): acceptance = accepted / drafted, tokens
      // per verification = spec_tokens / spec_verifications.
      {"spec_drafted", "counter", "Drafted tokens verified by speculative decoding", int64_t(s.spec_drafted)},
      {"spec_accepted", "counter", "Drafted tokens kept", int64_t(s.spec_accepted)},
      {"spec_verifications", "counter", "Verifications (one speculating sequence in one engine step)", int64_t(s.spec_verifications)},
      {"spec_tokens", "counter", "Tokens produced by verifications (kept drafts plus one each)", int64_t(s.spec_tokens)},
      {"spec_draft_time_us", "counter", "Microseconds the draft model (--draft-model) spent drafting", int64_t(s.spec_draft_us)},
      {"draft_kv_blocks_used", "gauge", "The draft model's KV blocks in use (0 without --draft-model)", int64_t(s.draft_kv_blocks_used)},
      {"connections", "gauge", "Open client connections", int64_t(st.connections.load())},
      {"websockets", "gauge", "Open WebSocket connections (also counted in connections)", int64_t(st.websockets.load())},
      {"max_connections", "gauge", "Most open connections (--max-connections)", int64_t(st.max_connections.load())},
      {"connections_evicted", "counter", "Idle connections closed to make room for new ones at --max-connections", int64_t(st.connections_evicted.load())},
      {"connections_refused", "counter", "Connections closed at accept: --max-connections reached, none idle", int64_t(st.connections_refused.load())},
      {"connections_refused_per_ip", "counter", "Connections closed at accept: their address at --max-connections-per-ip", int64_t(st.connections_refused_per_ip.load())},
      {"busy", "gauge", "Requests being answered", int64_t(st.busy.load())},
      {"generations", "gauge", "API requests with engine work in flight", int64_t(ctx.generations.size())},
      {"http_requests", "counter", "HTTP requests answered", int64_t(st.http_requests.load())},
      {"http_errors", "counter", "HTTP requests answered with status >= 400", int64_t(st.http_errors.load())},
      {"ws_requests", "counter", "WebSocket generation requests", int64_t(st.ws_requests.load())},
      {"ready", "gauge", "1 when accepting requests", int64_t(st.ready && !st.draining)},
      // Sessions and caching (docs/api.md); the cache counters are 0 without a cache.
      {"response_cache_hits", "counter", "Response cache hits", int64_t(cache ? cache->hits.load() : 0)},
      {"response_cache_misses", "counter", "Response cache misses", int64_t(cache ? cache->misses.load() : 0)},
      {"response_cache_bytes", "gauge", "Bytes held by the local response cache", int64_t(cache ? cache->bytes.load() : 0)},
      {"response_cache_entries", "gauge", "Answers in the local response cache", int64_t(cache ? cache->entries.load() : 0)},
      {"response_cache_evictions", "counter", "Answers evicted from the local response cache", int64_t(cache ? cache->evictions.load() : 0)},
      {"static_answers_served", "counter", "Requests answered from the static answers", int64_t(ctx.services.static_answers_served.load())},
      {"session_turns_stored", "counter", "Session turns appended", int64_t(ctx.services.session_turns_stored.load())},
      {"state_fallbacks", "counter", "Session and cache operations served locally because Redis failed", int64_t(fallback ? fallback->fallbacks.load() : 0)},
      {"state_backend_up", "gauge", "0 while the last Redis operation (or the startup check) failed; 1 otherwise, and without Redis", int64_t(state_backend_up(ctx.services))},
      // Protection and operations (docs/operations.md).
      {"rate_limited", "counter", "Requests refused with 429", int64_t(m.rate_limited.load())},
      {"unauthorized", "counter", "Requests refused with 401", int64_t(m.unauthorized.load())},
      {"shed", "counter", "Requests refused with 503 by admission control or the memory watchdog", int64_t(m.shed.load())},
      {"rejected_input", "counter", "Requests refused by input validation or the blocklist", int64_t(m.rejected_input.load())},
      {"degraded_requests", "counter", "Requests served by the fallback model", int64_t(m.degraded_requests.load())},
      {"deadline_exceeded", "counter", "Engine requests ended by their timeout", int64_t(m.deadline_exceeded.load())},
      {"watchdog_evictions", "counter", "Cache evictions by the memory watchdog", int64_t(m.watchdog_evictions.load())},
      {"watchdog_prefix_cache_evictions", "counter", "Engine prefix caches emptied by the memory watchdog (its first resort)", int64_t(m.watchdog_prefix_cache_evictions.load())},
      {"watchdog_response_cache_evictions", "counter", "Response caches emptied by the memory watchdog (its second resort)", int64_t(m.watchdog_response_cache_evictions.load())},
      {"degraded", "gauge", "1 in degraded mode", int64_t(st.degraded.load())},
      {"shedding", "gauge", "1 while memory is above the high watermark", int64_t(ctx.shedding.load())},
      {"queued_requests", "gauge", "Requests waiting for a first token", int64_t(ctx.generations.queued_requests())},
      {"queued_tokens", "gauge", "Prompt tokens waiting for a first token", int64_t(ctx.generations.queued_tokens())},
      {"oldest_wait_ms", "gauge", "Milliseconds the longest-waiting request has waited for its first token", int64_t(ctx.generations.oldest_wait_s() * 1000)},
      {"rss_bytes", "gauge", "Process resident memory (bytes)", int64_t(m.rss_bytes.load())},
      {"max_rss_bytes", "gauge", "--max-rss (0: none)", int64_t(ctx.ops.max_rss)},
      {"model_bytes", "gauge", "Model weight bytes", int64_t(ctx.model.weight_bytes())},
      // LoRA adapters (docs/lora.md); per adapter: parley_lora_requests_total{adapter=...}.
      {"lora_adapters_loaded", "gauge", "LoRA adapters in memory", int64_t(lora.loaded)},
      {"lora_adapter_bytes", "gauge", "Memory of the LoRA adapters in memory (bytes)", int64_t(lora.bytes)},
      {"lora_adapter_budget_bytes", "gauge", "--lora-memory (0: no limit)", int64_t(ctx.adapters->budget())},
      {"lora_adapter_loads", "counter", "LoRA adapter loads (at start, on first use, after an eviction, by the admin route)", int64_t(lora.loads)},
      {"lora_adapter_evictions", "counter", "LoRA adapters evicted to stay under --lora-memory", int64_t(lora.evictions)},
  };
}

struct Latency {
  const char* name;
  const char* help;
  const obs::Histogram& all;
  const obs::LatencyWindow& recent;
};

std::vector<Latency> latencies(const ServeMetrics& m) {
  return {{"ttft", "Time to first token (seconds)", m.ttft, m.ttft_recent},
          {"inter_token", "Time between tokens of one request (seconds)", m.inter_token, m.inter_token_recent},
          {"e2e", "Request latency, submit to final event (seconds)", m.e2e, m.e2e_recent},
          {"queue_wait", "Wait from admission to the engine's first step for the request (seconds)", m.queue_wait, m.queue_wait_recent}};
}

// Prometheus label values escape backslash, quote and newline.
std::string label_value(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

void lora_metrics(std::ostream& out, const std::vector<LoraInfo>& adapters) {
  if (adapters.empty()) return;
  out << "# HELP parley_lora_requests_total Requests that named the LoRA adapter\n"
         "# TYPE parley_lora_requests_total counter\n";
  for (const LoraInfo& a : adapters)
    out << "parley_lora_requests_total{adapter=\"" << label_value(a.name) << "\"} " << a.requests << '\n';
  out << "# HELP parley_lora_adapter_loaded 1 while the LoRA adapter is in memory\n"
         "# TYPE parley_lora_adapter_loaded gauge\n";
  for (const LoraInfo& a : adapters)
    out << "parley_lora_adapter_loaded{adapter=\"" << label_value(a.name) << "\"} " << int(a.loaded) << '\n';
}

}  // namespace

json stats_json(const ApiContext& ctx) {
  json out = {{"model", ctx.model_id}};
  for (const Metric& m : collect(ctx)) out[m.name] = m.value;
  // Over the last 10 seconds (the dashboard polls every second).
  for (const Latency& l : latencies(ctx.metrics)) {
    out[std::string(l.name) + "_p50_s"] = l.recent.quantile(0.5);
    out[std::string(l.name) + "_p99_s"] = l.recent.quantile(0.99);
  }
  out["output_tokens_per_s"] = ctx.metrics.output_tokens.rate();
  out["queue_wait_count"] = ctx.metrics.queue_wait.count();  // requests that reached the engine's first step
  const EngineStats s = ctx.engine.stats();
  out["prefix_cache_hit_rate"] =
      s.prefix_cache_query_tokens ? double(s.prefix_cache_hit_tokens) / double(s.prefix_cache_query_tokens) : 0.0;
  out["kv_usage"] = s.kv_blocks_total ? double(s.kv_blocks_used) / double(s.kv_blocks_total) : 0.0;
  out["spec_acceptance_rate"] = s.spec_drafted ? double(s.spec_accepted) / double(s.spec_drafted) : 0.0;
  out["spec_tokens_per_step"] = s.spec_verifications ? double(s.spec_tokens) / double(s.spec_verifications) : 0.0;
  return out;
}

std::string prometheus_text(const ApiContext& ctx) { return prometheus_text(NamedContexts{{"", &ctx}}); }

std::string model_label(const std::string& name) { return "model=\"" + label_value(name) + '"'; }

// One family: its HELP and TYPE, then one sample per model ("" names none: no label).
std::string prometheus_text(const NamedContexts& models) {
  std::ostringstream out;
  std::vector<std::vector<Metric>> metrics;
  for (const auto& [name, ctx] : models) metrics.push_back(collect(*ctx));
  const auto labels = [&](size_t k) { return models[k].first.empty() ? std::string() : model_label(models[k].first); };
  for (size_t i = 0; i < metrics[0].size(); ++i) {
    const Metric& m = metrics[0][i];
    const std::string name = std::string("parley_") + m.name + (std::string_view(m.type) == "counter" ? "_total" : "");
    out << "# HELP " << name << ' ' << m.help << "\n# TYPE " << name << ' ' << m.type << '\n';
    for (size_t k = 0; k < models.size(); ++k)
      out << name << (models[k].first.empty() ? "" : "{" + labels(k) + "}") << ' ' << metrics[k][i].value << '\n';
  }
  const auto histogram = [&](const std::string& name, const char* help, auto pick) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " histogram\n";
    for (size_t k = 0; k < models.size(); ++k) out << pick(models[k].second->metrics).prometheus_samples(name, labels(k));
  };
  const std::vector<Latency> front = latencies(models[0].second->metrics);
  for (size_t l = 0; l < front.size(); ++l)
    histogram(std::string("parley_") + front[l].name + "_seconds", front[l].help,
              [l](const ServeMetrics& m) -> const obs::Histogram& { return latencies(m)[l].all; });
  histogram("parley_batch_size", "Sequences decoded together, sampled every second",
            [](const ServeMetrics& m) -> const obs::Histogram& { return m.batch_size; });
  out << "# HELP parley_responses_total HTTP responses by route and status\n# TYPE parley_responses_total counter\n";
  for (const auto& [key, count] : models[0].second->metrics.responses())
    out << "parley_responses_total{route=\"" << key.first << "\",status=\"" << key.second << "\"} " << count << '\n';
  lora_metrics(out, models[0].second->adapters->list());  // the default model's adapters
  return out.str();
}

}  // namespace parley::serve
