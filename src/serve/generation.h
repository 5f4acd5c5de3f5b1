#pragma once
// The engine requests behind one API request (n choices, several prompts),
// with their events handed over to the connection's strand: the engine's sink
// runs on the engine thread and must not block, so it only posts.
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "engine/llm_engine.h"

namespace parley::serve {

class Generation;

// Every live generation, so that shutdown can wait for them and cancel those
// that outlive the grace period.
class GenerationRegistry {
 public:
  void cancel_all();
  size_t size() const;

 private:
  friend class Generation;
  mutable std::mutex mu_;
  std::set<Generation*> live_;
};

class Generation : public std::enable_shared_from_this<Generation> {
 public:
  using Post = std::function<void(std::function<void()>)>;
  // Runs on the strand for every event of choice `index`, in order per choice.
  using OnEvent = std::function<void(size_t index, const Event& event)>;

  // Submits every request; `on_event` sees each one's events. The generation
  // lives until the last final event has been handled.
  static std::shared_ptr<Generation> start(LlmEngine& engine, GenerationRegistry& registry,
                                           std::vector<Request> requests, Post post, OnEvent on_event);
  ~Generation();
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  // Cancels the choices that have not finished (from any thread once start()
  // has returned; events then end with FinishReason::Cancelled).
  void cancel();

 private:
  friend class GenerationRegistry;
  Generation(LlmEngine& engine, GenerationRegistry& registry, Post post, OnEvent on_event);

  LlmEngine& engine_;
  GenerationRegistry& registry_;
  Post post_;
  OnEvent on_event_;
  std::vector<RequestId> ids_;
};

}  // namespace parley::serve
