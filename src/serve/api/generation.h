#pragma once
// The engine requests behind one API request (n choices, several prompts),
// with their events handed over to the connection's strand: the engine's sink
// runs on the engine thread and must not block, so it only posts (and feeds
// the latency histograms, which are lock-free).
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "engine/llm_engine.h"
#include "obs/logger.h"
#include "serve/api/serve_metrics.h"

namespace parley::serve {

class Generation;

// Every live generation, so that shutdown can wait for them and cancel those
// that outlive the grace period; also what admission control and degraded
// mode look at (tokens and time waiting for a first token).
class GenerationRegistry {
 public:
  void cancel_all();
  size_t size() const;
  // Histograms fed by every generation, HTTP and WebSocket (null: none). Set before serving.
  void set_metrics(ServeMetrics* metrics) { metrics_ = metrics; }
  // Where each engine request's "request_finished" line goes (null: nowhere);
  // with `content` it holds the answer text. Set before serving.
  void set_log(obs::Logger* log, bool content) {
    log_ = log;
    log_content_ = content;
  }
  // Requests submitted and still waiting for their first token, and their prompt tokens.
  uint64_t queued_requests() const { return queued_requests_.load(); }
  uint64_t queued_tokens() const { return queued_tokens_.load(); }
  // Seconds the longest-waiting request (no first token yet) has waited; 0 when none.
  double oldest_wait_s() const;

 private:
  friend class Generation;
  mutable std::mutex mu_;
  std::set<Generation*> live_;
  ServeMetrics* metrics_ = nullptr;
  obs::Logger* log_ = nullptr;
  bool log_content_ = false;
  std::atomic<uint64_t> queued_requests_{0}, queued_tokens_{0};
};

class Generation : public std::enable_shared_from_this<Generation> {
 public:
  using Post = std::function<void(std::function<void()>)>;
  // Runs on the strand for every event of choice `index`, in order per choice.
  using OnEvent = std::function<void(size_t index, const Event& event)>;
  // Runs on the engine thread (must not block) for each request's final event.
  using OnFinal = std::function<void(const Event& final_event)>;

  // Submits every request to `engine`; `on_event` sees each one's events. The
  // generation lives until the last final event has been handled.
  static std::shared_ptr<Generation> start(LlmEngine& engine, GenerationRegistry& registry,
                                           std::vector<Request> requests, Post post, OnEvent on_event,
                                           OnFinal on_final = {}, std::string request_id = "",
                                           std::string user = "");
  ~Generation();
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  // Cancels the choices that have not finished (from any thread once start()
  // has returned; events then end with FinishReason::Cancelled).
  void cancel();
  // The engine it runs on (the fallback model's while the server is degraded).
  const LlmEngine& engine() const { return engine_; }

 private:
  friend class GenerationRegistry;
  using Clock = std::chrono::steady_clock;
  struct Timing {
    Clock::time_point submitted, first_token, last_token;
    std::string text;  // the answer so far, kept only for a --log-content line
    std::atomic<bool> started{false};  // first event seen (read by oldest_wait_s)
    uint64_t prompt_tokens = 0;
  };
  Generation(LlmEngine& engine, GenerationRegistry& registry, Post post, OnEvent on_event, OnFinal on_final,
             size_t n);
  void observe(size_t index, const Event& e);  // engine thread
  void log_finished(size_t index, const Event& e, Clock::time_point now);  // engine thread

  LlmEngine& engine_;
  GenerationRegistry& registry_;
  Post post_;
  OnEvent on_event_;
  OnFinal on_final_;
  std::unique_ptr<Timing[]> timing_;
  size_t n_;
  std::vector<RequestId> ids_;
  std::string request_id_;  // the API request's X-Request-Id, for the log
  std::string user_;        // the body's `user` (the client's end user), for the log
};

}  // namespace parley::serve
