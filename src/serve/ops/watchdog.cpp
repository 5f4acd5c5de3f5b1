#include "serve/ops/watchdog.h"

#include <algorithm>

#include "obs/hysteresis.h"
#include "obs/process_memory.h"

namespace parley::serve {
namespace {

using namespace std::chrono_literals;

struct WatchdogState {
  // Shedding: on above 90% of --max-rss, off below 80%.
  obs::Hysteresis memory{0.9, 0.8, 0ms};
  // Degraded mode: the worse of the two signals relative to its threshold.
  obs::Hysteresis load;
  explicit WatchdogState(const OpsSettings& o)
      : load(1.0, 0.5, std::chrono::milliseconds(int64_t(o.degrade_hold_s * 1000))) {}
};

void count_eviction(ApiContext& ctx, std::atomic<uint64_t>& stage, const nlohmann::json& fields) {
  ++stage;
  ++ctx.metrics.watchdog_evictions;
  ctx.log.log(obs::LogLevel::Warn, "memory_evict", fields);
}

// The memory that can go at once, in order: the engines' prefix caches (KV
// blocks no request holds), then the response cache. Each stage runs on
// every check above the high watermark while it has something to drop.
void evict(ApiContext& ctx, uint64_t rss, bool entering) {
  uint64_t cached = 0;
  for (LlmEngine* e : {&ctx.engine, ctx.fallback_engine})
    if (const uint64_t n = e ? e->stats().kv_blocks_cached : 0; n > 0) {
      e->drop_cached_blocks();
      cached += n;
    }
  if (cached > 0)
    count_eviction(ctx, ctx.metrics.watchdog_prefix_cache_evictions,
                   {{"stage", "prefix_cache"}, {"cached_blocks", cached}, {"rss_bytes", rss}});
  state::ResponseCache* cache = ctx.services.response_cache;
  // On entering, cleared whatever its local counters say (a shared backend counts nothing here).
  if (cache && (entering || cache->stats().entries.load() > 0)) {
    const uint64_t entries = cache->stats().entries.load();
    cache->clear();
    count_eviction(ctx, ctx.metrics.watchdog_response_cache_evictions,
                   {{"stage", "response_cache"}, {"entries", entries}, {"rss_bytes", rss}});
  }
}

// Above the high watermark: evict, and shed new requests (the last stage)
// until RSS is back below the low one.
void check_memory(ApiContext& ctx, WatchdogState& w) {
  const uint64_t rss = obs::resident_bytes();
  ctx.metrics.rss_bytes = rss;
  if (ctx.ops.max_rss == 0) return;
  const bool was = ctx.shedding;
  const bool now = w.memory.update(double(rss) / double(ctx.ops.max_rss));
  if (now && !was)
    ctx.log.log(obs::LogLevel::Warn, "memory_high", {{"rss_bytes", rss}, {"max_rss", ctx.ops.max_rss}});
  else if (was && !now)
    ctx.log.log(obs::LogLevel::Info, "memory_ok", {{"rss_bytes", rss}});
  if (now) evict(ctx, rss, !was);
  ctx.shedding = now;
}

void check_load(ApiContext& ctx, WatchdogState& w) {
  const OpsSettings& o = ctx.ops;
  if (o.degrade_queue_wait_ms <= 0 && o.degrade_p99_ms <= 0) return;
  double signal = 0;
  if (o.degrade_queue_wait_ms > 0) signal = ctx.generations.oldest_wait_s() * 1000 / o.degrade_queue_wait_ms;
  if (o.degrade_p99_ms > 0) signal = std::max(signal, ctx.metrics.ttft_recent.quantile(0.99) * 1000 / o.degrade_p99_ms);
  const bool was = ctx.state.degraded;
  const bool now = w.load.update(signal);
  if (now != was)
    ctx.log.log(obs::LogLevel::Warn, now ? "degraded_enter" : "degraded_leave", {{"signal", signal}});
  ctx.state.degraded = now;
}

void tick_windows(ServeMetrics& m) {
  for (obs::LatencyWindow* w : {&m.ttft_recent, &m.inter_token_recent, &m.e2e_recent, &m.queue_wait_recent}) w->tick();
}

}  // namespace

void start_watchdog(ApiContext& ctx) {
  auto w = std::make_shared<WatchdogState>(ctx.ops);
  tick_windows(ctx.metrics);  // the windows' first edge: now
  ctx.watchdog = std::make_unique<obs::Periodic>(1000ms, [&ctx, w] {
    tick_windows(ctx.metrics);
    if (const int32_t running = ctx.engine.stats().running; running > 0) ctx.metrics.batch_size.observe(running);
    check_memory(ctx, *w);
    check_load(ctx, *w);
  });
}

}  // namespace parley::serve
