#pragma once
// One model of a multi-model server in memory (docs/api.md, "Several
// models"): its weights, engine and ApiContext, with the API's routes on a
// router of its own. The server's router checked keys, rates and input
// before a request reaches these routes (ServedModels' dispatch).
#include <memory>

#include "engine/llm_engine.h"
#include "model/model.h"
#include "serve/api/api_context.h"
#include "serve/models/model_set.h"
#include "serve/ops/fallback_model.h"
#include "serve/transport/router.h"

namespace parley::serve {

// What a loaded model holds in memory: its weights and its engine's KV pool,
// its draft model's weights, and its fallback model's weights (unless the
// draft is the same file) and KV pool.
uint64_t resident_bytes(const ApiContext& ctx);

// Gives `ctx` the protection of the server (`front`): limits, keys, the rate
// limiter (one budget for every model) and the log level.
void share_protection(const ApiContext& front, ApiContext& ctx);

class ServedModel : public ResidentModel {
 public:
  // `ctx` is set up for `model` and `engine` (and `fallback`, its
  // --fallback-model, when not null); registers the routes, starts its
  // watchdog, marks it ready.
  ServedModel(std::unique_ptr<Model> model, std::unique_ptr<LlmEngine> engine, std::unique_ptr<ApiContext> ctx,
              std::unique_ptr<FallbackModel> fallback = nullptr);
  // Stops the watchdog, then the engines (their last events end generations in the context).
  ~ServedModel() override;
  uint64_t bytes() const override { return bytes_; }
  ApiContext& context() { return *ctx_; }
  const Router& router() const { return router_; }

 private:
  std::unique_ptr<Model> model_;
  std::unique_ptr<ApiContext> ctx_;
  Router router_;
  std::unique_ptr<FallbackModel> fallback_;
  std::unique_ptr<LlmEngine> engine_;  // last: destroyed first
  uint64_t bytes_ = 0;
};

// The default model of a multi-model server: the server's own context, never unloaded.
class FrontModel : public ResidentModel {
 public:
  explicit FrontModel(const ApiContext& ctx) : bytes_(resident_bytes(ctx)) {}
  uint64_t bytes() const override { return bytes_; }

 private:
  uint64_t bytes_;
};

}  // namespace parley::serve
