#include "serve/api/generation.h"

#include <algorithm>
#include <cmath>

namespace parley::serve {
namespace {

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }
double milliseconds(std::chrono::steady_clock::duration d) { return std::round(seconds(d) * 1e6) / 1e3; }

}  // namespace

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

double GenerationRegistry::oldest_wait_s() const {
  const auto now = Generation::Clock::now();
  double oldest = 0;
  std::lock_guard lock(mu_);
  for (const Generation* g : live_)
    for (size_t i = 0; i < g->n_; ++i)
      if (!g->timing_[i].started) oldest = std::max(oldest, seconds(now - g->timing_[i].submitted));
  return oldest;
}

Generation::Generation(LlmEngine& engine, GenerationRegistry& registry, Post post, OnEvent on_event,
                       OnFinal on_final, size_t n)
    : engine_(engine), registry_(registry), post_(std::move(post)), on_event_(std::move(on_event)),
      on_final_(std::move(on_final)), timing_(new Timing[n]), n_(n) {}

Generation::~Generation() {
  std::lock_guard lock(registry_.mu_);
  registry_.live_.erase(this);
}

std::shared_ptr<Generation> Generation::start(LlmEngine& engine, GenerationRegistry& registry,
                                              std::vector<Request> requests, Post post, OnEvent on_event,
                                              OnFinal on_final, std::string request_id, std::string user) {
  std::shared_ptr<Generation> g(
      new Generation(engine, registry, std::move(post), std::move(on_event), std::move(on_final), requests.size()));
  g->request_id_ = std::move(request_id);
  g->user_ = std::move(user);
  std::vector<std::pair<Request, EventSink>> batch;
  for (size_t i = 0; i < requests.size(); ++i) {
    g->timing_[i].submitted = Clock::now();
    g->timing_[i].prompt_tokens = requests[i].prompt.size();
    registry.queued_tokens_ += requests[i].prompt.size();
    ++registry.queued_requests_;
    // The sink holds the generation until the engine drops it after the final event.
    batch.emplace_back(std::move(requests[i]), [g, i](const Event& e) {
      g->observe(i, e);
      g->post_([g, i, e] { g->on_event_(i, e); });
    });
  }
  // All at once, so the engine admits a batch (or n choices) in one step.
  std::vector<RequestId> ids = engine.submit_all(std::move(batch));
  std::lock_guard lock(registry.mu_);
  g->ids_ = std::move(ids);
  registry.live_.insert(g.get());
  return g;
}

void Generation::observe(size_t index, const Event& e) {
  Timing& t = timing_[index];
  const auto now = Clock::now();
  ServeMetrics* m = registry_.metrics_;
  const bool first = !t.started.exchange(true);
  if (first) {
    registry_.queued_tokens_ -= t.prompt_tokens;
    --registry_.queued_requests_;
    // Not observed for a request that ended before the engine ran it.
    if (m && e.scheduled != Clock::time_point{}) m->queue_wait.observe(std::max(0.0, seconds(e.scheduled - t.submitted)));
  }
  if (m && e.token >= 0) {
    (first ? m->ttft : m->inter_token).observe(seconds(now - (first ? t.submitted : t.last_token)));
    m->output_tokens.add(1);
  }
  if (e.token >= 0) {
    if (t.first_token == Clock::time_point{}) t.first_token = now;
    t.last_token = now;
  }
  if (registry_.log_content_) t.text += e.text;
  if (!e.final) return;
  if (m) {
    m->e2e.observe(seconds(now - t.submitted));
    if (e.finish == FinishReason::Deadline) ++m->deadline_exceeded;
  }
  log_finished(index, e, now);
  if (on_final_) on_final_(e);
}

// The engine side of a request, one line per choice; no prompt or answer
// text unless --log-content (the access line has the request body then).
void Generation::log_finished(size_t index, const Event& e, Clock::time_point now) {
  obs::Logger* log = registry_.log_;
  const obs::LogLevel level = e.finish == FinishReason::Error ? obs::LogLevel::Warn : obs::LogLevel::Info;
  if (!log || !log->enabled(level)) return;
  const Timing& t = timing_[index];
  nlohmann::json line = {{"request_id", request_id_},
                         {"choice", index},
                         {"prompt_tokens", e.prompt_tokens},
                         {"cached_prompt_tokens", e.cached_tokens},
                         {"completion_tokens", e.completion_tokens},
                         {"finish_reason", finish_reason_name(e.finish)},
                         {"total_ms", milliseconds(now - t.submitted)}};
  if (e.scheduled != Clock::time_point{}) line["queue_wait_ms"] = std::max(0.0, milliseconds(e.scheduled - t.submitted));
  if (t.first_token != Clock::time_point{}) line["ttft_ms"] = milliseconds(t.first_token - t.submitted);
  if (!user_.empty()) line["user"] = user_;
  if (!e.error.empty()) line["error"] = e.error;
  if (registry_.log_content_) line["text"] = t.text;
  log->log(level, "request_finished", line);
}

void Generation::cancel() {
  for (RequestId id : ids_) engine_.cancel(id);
}

}  // namespace parley::serve
