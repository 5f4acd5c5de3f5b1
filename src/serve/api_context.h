#pragma once
// What the API routes share: the served model and its engine, request
// limits, live generations, and the server's state and counters.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/llm_engine.h"
#include "model/model.h"
#include "serve/exchange.h"
#include "serve/generation.h"
#include "serve/generation_params.h"
#include "serve/server_state.h"

namespace parley::serve {

struct ApiContext {
  ApiContext(const Model& m, LlmEngine& e, std::string id, std::string fp, ParamLimits l);  // created: now

  const Model& model;
  LlmEngine& engine;
  std::string model_id;     // the name clients use in "model"
  std::string fingerprint;  // system_fingerprint
  int64_t created = 0;      // unix time the model was loaded
  ParamLimits limits;
  size_t max_pending_bytes = 4 << 20;  // a stream whose client reads slower is cancelled
  GenerationRegistry generations;
  ServerState state;
};

// 503 while the server is not accepting work (loading or shutting down).
void require_ready(const ApiContext& ctx);
// 404 when the body names a model other than the one served.
void check_model(const json& body, const ApiContext& ctx);
// Runs `requests` for an HTTP exchange: events reach `on_event` on the
// exchange's strand, and a client that goes away cancels them.
std::shared_ptr<Generation> start_generation(const ExchangePtr& exchange, ApiContext& ctx,
                                             std::vector<Request> requests, Generation::OnEvent on_event);

}  // namespace parley::serve
