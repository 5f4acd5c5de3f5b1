#pragma once
// The operations flags of `parley serve` (docs/operations.md); 0 means off.
#include <cstdint>

#include "serve/protection/client_address.h"

namespace parley::serve {

struct OpsSettings {
  int32_t max_messages = 0;       // messages per chat request
  int32_t max_prompt_tokens = 0;  // per prompt, after the chat template
  int32_t max_tokens_limit = 0;   // caps every request's max_tokens
  int32_t max_queue = 0;          // requests waiting for the engine
  uint64_t max_queue_tokens = 0;  // prompt tokens waiting for a first token
  double max_request_timeout_s = 0;  // caps `timeout`; also the default when set
  uint64_t max_rss = 0;           // bytes; above 90% new requests are shed
  bool log_content = false;       // prompt and answer text in the logs
  double degrade_queue_wait_ms = 0;  // degraded mode above this wait for a first token
  double degrade_p99_ms = 0;         // … or above this P99 time to first token (last 10 s)
  double degrade_hold_s = 10;        // leave after this long below half of both
  TrustedProxies trusted_proxies;    // --trusted-proxy: whose X-Forwarded-For is believed
};

}  // namespace parley::serve
