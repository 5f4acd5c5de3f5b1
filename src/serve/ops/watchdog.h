#pragma once
// The once-a-second check (docs/operations.md): process RSS against
// --max-rss (above 90%: empty the engine's prefix cache, then the response
// cache, and shed new requests with 503 until below 80%), the latency windows, the batch-size sample, and
// degraded mode (enter when the wait for a first token or the recent P99
// TTFT passes its threshold, leave after --degrade-hold seconds below half).
#include <memory>

#include "serve/api/api_context.h"

namespace parley::serve {

// Starts ctx.watchdog (a thread); stop with ctx.watchdog.reset().
void start_watchdog(ApiContext& ctx);

}  // namespace parley::serve
