#pragma once
// A multi-model server (docs/api.md, "Several models"): the default model is
// the server's own ApiContext (`front`: loaded at start, never unloaded, the
// model of every request that names none, and the holder of what all models
// share: server state, keys, rate limiter, log); the others are
// ServedModels in a ModelSet, loaded on demand when a request names them.
#include <string>
#include <utility>
#include <vector>

#include "serve/api/api_context.h"
#include "serve/api/model_directory.h"
#include "serve/models/model_set.h"
#include "serve/models/served_model.h"
#include "serve/ops/metrics.h"
#include "serve/transport/router.h"

namespace parley::serve {

class ServedModels : public ModelDirectory {
 public:
  // `loader` builds a ServedModel by name (share_protection from `front`).
  ServedModels(ApiContext& front, ModelSetOptions options, ModelSet::Loader loader);
  void add(const std::string& name, uint64_t estimated_bytes) { set_.add(name, estimated_bytes); }
  const ModelSet& set() const { return set_; }

  // On the server's router, after its protection and before its other
  // routes: GET /v1/models[/{id}] with every model, GET /v1/stats and
  // /metrics per model, and the middleware that sends a POST whose JSON body
  // names another model to that model's routes (waiting for its load).
  void add_routes(Router& router);

  // The WebSocket API's way to the models after the default one.
  bool acquire(const std::string& name, Ready ready) override;

  // Shutdown, beside the front's: no new work, the loaded models' generations.
  void start_draining();
  bool idle() const;
  void cancel_all();

 private:
  std::vector<std::pair<std::string, std::shared_ptr<ServedModel>>> loaded_models() const;
  NamedContexts contexts(const std::vector<std::pair<std::string, std::shared_ptr<ServedModel>>>& loaded) const;
  bool is_other(const std::string& name) const;  // a model of the set besides the default
  bool dispatch(const Router& router, const ExchangePtr& ex, Access access);
  json list() const;

  ApiContext& front_;
  ModelSet set_;
};

}  // namespace parley::serve
