#include "serve/metrics.h"

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
  return {
      {"waiting", "gauge", "Requests waiting for the engine", int64_t(s.waiting)},
      {"running", "gauge", "Sequences being decoded", int64_t(s.running)},
      {"kv_blocks_total", "gauge", "KV cache blocks in the pool", int64_t(s.kv_blocks_total)},
      {"kv_blocks_used", "gauge", "KV cache blocks held by sequences", int64_t(s.kv_blocks_used)},
      {"kv_blocks_cached", "gauge", "Free KV blocks kept for prefix reuse", int64_t(s.kv_blocks_cached)},
      {"prefix_cache_hit_tokens", "counter", "Prompt tokens found in the prefix cache", int64_t(s.prefix_cache_hit_tokens)},
      {"prefix_cache_query_tokens", "counter", "Prompt tokens looked up in the prefix cache", int64_t(s.prefix_cache_query_tokens)},
      {"requests_finished", "counter", "Engine requests finished", int64_t(s.requests_finished)},
      {"requests_cancelled", "counter", "Engine requests cancelled", int64_t(s.requests_cancelled)},
      {"requests_failed", "counter", "Engine requests failed", int64_t(s.requests_failed)},
      {"preemptions", "counter", "Sequences preempted for KV memory", int64_t(s.preemptions)},
      {"prompt_tokens", "counter", "Prompt tokens processed", int64_t(s.prompt_tokens)},
      {"generated_tokens", "counter", "Tokens generated", int64_t(s.generated_tokens)},
      {"steps", "counter", "Engine steps", int64_t(s.steps)},
      {"connections", "gauge", "Open client connections", int64_t(st.connections.load())},
      {"busy", "gauge", "Requests being answered", int64_t(st.busy.load())},
      {"generations", "gauge", "API requests with engine work in flight", int64_t(ctx.generations.size())},
      {"http_requests", "counter", "HTTP requests answered", int64_t(st.http_requests.load())},
      {"http_errors", "counter", "HTTP requests answered with status >= 400", int64_t(st.http_errors.load())},
      {"ws_requests", "counter", "WebSocket generation requests", int64_t(st.ws_requests.load())},
      {"ready", "gauge", "1 when accepting requests", int64_t(st.ready && !st.draining)},
  };
}

}  // namespace

json stats_json(const ApiContext& ctx) {
  json out = {{"model", ctx.model_id}};
  for (const Metric& m : collect(ctx)) out[m.name] = m.value;
  return out;
}

std::string prometheus_text(const ApiContext& ctx) {
  std::ostringstream out;
  for (const Metric& m : collect(ctx)) {
    const std::string name = std::string("parley_") + m.name + (std::string_view(m.type) == "counter" ? "_total" : "");
    out << "# HELP " << name << ' ' << m.help << "\n# TYPE " << name << ' ' << m.type << '\n'
        << name << ' ' << m.value << '\n';
  }
  return out.str();
}

}  // namespace parley::serve
