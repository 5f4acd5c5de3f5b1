#include "serve/ops/fallback_model.h"

#include <filesystem>

#include "model/vocab_check.h"

namespace parley::serve {

FallbackModel::FallbackModel(const std::string& path, ApiContext& ctx, const EngineConfig& engine_config) : ctx_(ctx) {
  const auto& draft = engine_config.spec.draft;
  std::error_code ec;
  const bool shared = draft && std::filesystem::equivalent(draft->path(), path, ec);
  model_ = shared ? draft : std::shared_ptr<const Model>(Model::load(path));
  check_same_vocabulary(ctx.model, *model_, "--fallback-model");
  EngineConfig config = engine_config;
  if (shared) config.spec = SpecConfig{};
  engine_ = std::make_unique<LlmEngine>(*model_, config);
  ctx.fallback_engine = engine_.get();
}

FallbackModel::~FallbackModel() {
  // The engine goes before the model; its destructor delivers the last final events.
  ctx_.fallback_engine = nullptr;
  engine_.reset();
}

}  // namespace parley::serve
