#pragma once
// A served model's fallback (--fallback-model): a smaller model with the same
// vocabulary, with its own engine, that answers while the served model is
// degraded (docs/operations.md). Sets the context's fallback_engine while it
// exists; destroy it before the context (its engine's last events end
// generations registered there).
#include <memory>
#include <string>

#include "engine/llm_engine.h"
#include "serve/api/api_context.h"

namespace parley::serve {

class FallbackModel {
 public:
  // Loads `path` (the --draft-model of `engine_config` itself when it is that
  // file: loaded once, it does not draft for itself). Throws parley::Error
  // when it does not load or its vocabulary differs from ctx.model's.
  FallbackModel(const std::string& path, ApiContext& ctx, const EngineConfig& engine_config);
  ~FallbackModel();
  FallbackModel(const FallbackModel&) = delete;
  FallbackModel& operator=(const FallbackModel&) = delete;

 private:
  ApiContext& ctx_;
  std::shared_ptr<const Model> model_;
  std::unique_ptr<LlmEngine> engine_;
};

}  // namespace parley::serve
