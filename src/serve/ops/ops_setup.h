#pragma once
// Turns the operations flags of `parley serve` into the ApiContext's
// protection (keys, rate limits, blocklist, log level) and loads the
// fallback model with its own engine (docs/operations.md). Owns what it
// loads; destroy it after the server stopped and before the ApiContext
// (the fallback engine's last events end generations registered there).
#include <memory>
#include <string>
#include <vector>

#include "engine/llm_engine.h"
#include "serve/api/api_context.h"
#include "serve/ops/fallback_model.h"

namespace parley::state {
class RedisPool;
}

namespace parley::serve {

struct OpsOptions {
  std::vector<std::string> api_keys;  // --api-key (repeatable)
  std::vector<std::string> admin_keys;  // --admin-key (repeatable): admin routes and the API
  std::string api_keys_file;          // --api-keys-file: [{name, key, rps, tpm, admin}]
  RateLimits rate;                    // --rate-limit-rps/-burst/-tpm
  std::string redis_url;              // rate buckets shared through Redis ("" = local)
  std::string blocklist;              // --blocklist FILE
  std::string log_level = "info";
  std::string max_rss;                // "" = none; bytes, 512M, 2G, 50%
  std::string fallback_model;         // the default model's --fallback-model FILE ("": none)
  OpsSettings settings;               // the rest, parsed directly
};

class OpsSetup {
 public:
  // Throws parley::Error for unreadable files, bad values, or a fallback
  // model whose vocabulary differs from the main model's.
  OpsSetup(const OpsOptions& options, ApiContext& ctx, const EngineConfig& engine_config);
  ~OpsSetup();
  OpsSetup(const OpsSetup&) = delete;
  OpsSetup& operator=(const OpsSetup&) = delete;

 private:
  std::shared_ptr<state::RedisPool> redis_;
  std::unique_ptr<FallbackModel> fallback_;
};

}  // namespace parley::serve
