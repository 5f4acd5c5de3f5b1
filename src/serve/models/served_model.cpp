#include "serve/models/served_model.h"

#include "engine/engine_limits.h"
#include "serve/ops/watchdog.h"
#include "serve/routes/routes.h"
#include "serve/sessions/session_routes.h"

namespace parley::serve {

namespace {

uint64_t weights_and_kv(const Model& model, const LlmEngine& engine) {
  const KvLayout kv = kv_layout(model.config(), engine.config());
  return model.weight_bytes() + kv.block_bytes * uint64_t(kv.n_blocks);
}

}  // namespace

uint64_t resident_bytes(const ApiContext& ctx) {
  uint64_t n = weights_and_kv(ctx.model, ctx.engine);
  const auto& draft = ctx.engine.config().spec.draft;
  if (draft) n += draft->weight_bytes();
  if (const LlmEngine* fallback = ctx.fallback_engine) {
    n += weights_and_kv(fallback->model(), *fallback);
    if (&fallback->model() == draft.get()) n -= draft->weight_bytes();  // one file, loaded once
  }
  return n;
}

void share_protection(const ApiContext& front, ApiContext& ctx) {
  ctx.ops = front.ops;
  ctx.keys = front.keys;
  ctx.rate_limiter = front.rate_limiter;
  ctx.log.set_level(front.log.level());
  ctx.generations.set_log(&ctx.log, ctx.ops.log_content);
}

ServedModel::ServedModel(std::unique_ptr<Model> model, std::unique_ptr<LlmEngine> engine, std::unique_ptr<ApiContext> ctx,
                         std::unique_ptr<FallbackModel> fallback)
    : model_(std::move(model)), ctx_(std::move(ctx)), fallback_(std::move(fallback)), engine_(std::move(engine)),
      bytes_(resident_bytes(*ctx_)) {
  add_openai_routes(router_, *ctx_);
  add_anthropic_routes(router_, *ctx_);
  add_responses_routes(router_, *ctx_);
  add_batch_route(router_, *ctx_);
  add_embeddings_route(router_, *ctx_);
  add_tokenize_routes(router_, *ctx_);
  add_session_routes(router_, *ctx_);
  start_watchdog(*ctx_);
  ctx_->state.ready = true;
}

ServedModel::~ServedModel() {
  ctx_->watchdog.reset();
  engine_.reset();
  fallback_.reset();
}

}  // namespace parley::serve
