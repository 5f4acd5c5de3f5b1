#pragma once
// What the API routes share: the served model and its engine, request
// limits, live generations, and the server's state and counters.
#include <cstdint>
#include <iostream>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "engine/llm_engine.h"
#include "model/model.h"
#include "serve/adapters/lora_registry.h"
#include "serve/transport/api_error.h"
#include "serve/transport/exchange.h"
#include "serve/api/generation.h"
#include "serve/api/structured_output.h"
#include "serve/api/generation_params.h"
#include "serve/transport/server_state.h"
#include "serve/api/session_cache_services.h"
#include "obs/logger.h"
#include "obs/periodic.h"
#include "serve/protection/auth.h"
#include "serve/protection/ops_settings.h"
#include "serve/protection/rate_limit.h"
#include "serve/api/serve_metrics.h"
#include "serve/protection/validation.h"

namespace parley::serve {

struct ApiContext {
  ApiContext(const Model& m, LlmEngine& e, std::string id, std::string fp, ParamLimits l);  // created: now

  const Model& model;
  LlmEngine& engine;
  std::string model_id;     // the name clients use in "model"
  std::string fingerprint;  // system_fingerprint
  int64_t created = 0;      // unix time the model was loaded
  ParamLimits limits;
  Pooling pooling = Pooling::Mean;     // of /v1/embeddings: --pooling, else the model's own, else mean
  size_t max_pending_bytes = 4 << 20;  // a stream whose client reads slower is cancelled
  GenerationRegistry generations;
  GrammarCache grammars;  // compiled response formats, grammars and tool-call grammars
  ServerState state;
  StateServices services;  // sessions, response cache, static answers (null: off)
  std::unique_ptr<LoraRegistry> adapters;  // the LoRA adapters "model" may name (none at first)
  // Protection and operations (docs/operations.md).
  OpsSettings ops;
  KeyStore keys;                              // none: no API keys needed
  std::shared_ptr<RateLimiter> rate_limiter;  // null: no rate limits; shared by a multi-model server's models
  std::optional<Blocklist> blocklist;
  ServeMetrics metrics;
  obs::Logger log{std::cerr};                 // JSON lines: access and engine events
  LlmEngine* fallback_engine = nullptr;       // --fallback-model, used while degraded
  std::atomic<bool> shedding{false};          // memory above the high watermark: new requests get 503
  std::unique_ptr<obs::Periodic> watchdog;    // RSS, KV and degraded mode, every second (serve/ops/watchdog.h)
};

// 503 while the server is not accepting work (loading or shutting down).
void require_ready(const ApiContext& ctx);
// The parameter limits of a request on `ex`: the server's, with its API key's priority.
ParamLimits request_limits(const ApiContext& ctx, const Exchange& ex);
// 404 when the body names a model other than the one served; 400 when it
// names a LoRA adapter (routes that generate pick one with select_model,
// model_choice.h; the others run the base model only).
void check_model(const json& body, const ApiContext& ctx);
// The 404 (model_not_found) for a model name the server does not serve.
ApiError unknown_model(const std::string& name, const ApiContext& ctx);
// Generations start through admission control: start_generation, admission.h.

}  // namespace parley::serve
