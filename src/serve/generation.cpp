#include "serve/generation.h"

namespace parley::serve {

void GenerationRegistry::cancel_all() {
  // The ids are copied under the lock (a generation being destroyed blocks in
  // its destructor on mu_, so every pointer is intact) and cancelled outside
  // it: the engine may drop a sink, and so destroy a generation, while it
  // holds its own lock.
  std::vector<std::pair<LlmEngine*, RequestId>> ids;
  {
    std::lock_guard lock(mu_);
    for (Generation* g : live_)
      for (RequestId id : g->ids_) ids.emplace_back(&g->engine_, id);
  }
  for (auto [engine, id] : ids) engine->cancel(id);
}

size_t GenerationRegistry::size() const {
  std::lock_guard lock(mu_);
  return live_.size();
}

Generation::Generation(LlmEngine& engine, GenerationRegistry& registry, Post post, OnEvent on_event)
    : engine_(engine), registry_(registry), post_(std::move(post)), on_event_(std::move(on_event)) {}

Generation::~Generation() {
  std::lock_guard lock(registry_.mu_);
  registry_.live_.erase(this);
}

std::shared_ptr<Generation> Generation::start(LlmEngine& engine, GenerationRegistry& registry,
                                              std::vector<Request> requests, Post post, OnEvent on_event) {
  std::shared_ptr<Generation> g(new Generation(engine, registry, std::move(post), std::move(on_event)));
  std::vector<RequestId> ids;
  for (size_t i = 0; i < requests.size(); ++i) {
    // The sink holds the generation until the engine drops it after the final event.
    ids.push_back(engine.submit(std::move(requests[i]), [g, i](const Event& e) {
      g->post_([g, i, e] { g->on_event_(i, e); });
    }));
  }
  std::lock_guard lock(registry.mu_);
  g->ids_ = std::move(ids);
  registry.live_.insert(g.get());
  return g;
}

void Generation::cancel() {
  for (RequestId id : ids_) engine_.cancel(id);
}

}  // namespace parley::serve
