#pragma once
// The other models of a multi-model server, as the WebSocket API reaches
// them (HTTP requests reach them through the router: ServedModels' dispatch,
// models/served_models.h).
#include <functional>
#include <memory>
#include <string>

#include "serve/api/api_context.h"

namespace parley::serve {

class ModelDirectory {
 public:
  // The model's context and what keeps it in memory while held; or a null
  // context and why it could not be loaded. Runs on any thread.
  using Ready = std::function<void(ApiContext* ctx, std::shared_ptr<const void> hold, const std::string& error)>;
  virtual ~ModelDirectory() = default;
  // False when `name` is none of these models (the default model's context
  // answers it: its own name, one of its adapters, or model_not_found). Else
  // `ready` runs once the model is in memory (at once when it is).
  virtual bool acquire(const std::string& name, Ready ready) = 0;
};

}  // namespace parley::serve
