#include "engine/llm_engine.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "engine/draft_model_drafter.h"
#include "engine/engine_limits.h"
#include "engine/logprobs.h"
#include "engine/model_runner.h"
#include "engine/scheduler.h"
#include "model/model.h"
#include "model/vocab_check.h"
#include "util/error.h"

namespace parley {
namespace {

// As the kernel threads do (thread_pool.h): this thread runs part of every
// kernel, and denormal floats would slow it down a hundredfold.
void flush_denormals_here() {
#if defined(__x86_64__)
  __builtin_ia32_ldmxcsr(__builtin_ia32_stmxcsr() | 0x8040);
#endif
}

}  // namespace

struct LlmEngine::Impl {
  Impl(const Model& m, EngineConfig c);
  ~Impl();

  struct Submission {
    RequestId id;
    Request request;
    EventSink sink;
  };

  void loop();
  bool has_work() const { return !scheduler.waiting().empty() || !scheduler.running().empty(); }
  void accept(Submission& s);
  void constrain(Sequence& seq);
  std::string invalid(const Request& r) const;
  KvRetention retention_of(const Request& r) const;  // embeddings: always full
  std::vector<float> pooled_state(const Sequence& seq) const;
  void cancel(RequestId id);
  void expire(Clock::time_point now);
  bool step();
  // A sequence due a token this step and its logits row; the token drawn
  // ahead of sample() (-1 when not) or the exception that draw threw.
  struct Draw {
    Sequence* seq;
    float* logits;
    int32_t token = -1;
    std::exception_ptr error;
  };
  void draw_tokens();
  void sample(const Draw& d);
  void sample_token(const Draw& d);
  void verify(const Draw& d);
  void logprob_logits(Sequence& seq, const float* logits);
  int32_t choose(Sequence& seq, float* logits, int32_t drawn);
  bool emit(Sequence& seq, int32_t token);
  void finish(Sequence& seq, FinishReason why, const std::string& error = "");
  void deliver(const EventSink& sink, const Event& e);
  void deliver_final(const EventSink& sink, const Event& e);
  void publish();

  const Model& model;
  const EngineConfig config;
  const KvLayout layout;
  ModelRunner runner;
  BlockManager blocks;
  Speculator speculator;
  Scheduler scheduler;
  std::unique_ptr<DraftModelDrafter> drafter;  // SpecMode::Draft
  std::unordered_map<RequestId, std::unique_ptr<Sequence>> live;
  uint64_t arrivals = 0;
  std::vector<float> penalised;  // logits for log-probabilities
  std::shared_ptr<const GrammarVocab> grammar_vocab;  // built for the first request with a grammar
  std::vector<Draw> draws;       // this step's, reused
  std::vector<Sequence*> embedded;  // this step's finished embedding requests
  std::vector<Submission> inbox, inbox_taken;
  std::vector<RequestId> cancels, cancels_taken;
  std::atomic<RequestId> next_id{1};
  mutable std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  bool drop_cache = false;  // drop_cached_blocks() was called
  EngineStats stats, shared_stats;  // engine thread's, and the copy behind `mu`
  std::thread thread;
};

LlmEngine::Impl::Impl(const Model& m, EngineConfig c)
    : model(m),
      config(resolve_config(m.config(), c)),
      layout(kv_layout(m.config(), config)),
      runner(m, config, layout.n_blocks, layout.context_limit),
      blocks(int32_t(layout.n_blocks), config.block_size, config.prefix_cache),
      speculator(config.spec),
      scheduler(config, blocks, &speculator, layout.context_limit),
      penalised(size_t(m.config().vocab_size)) {
  blocks.set_copy([this](int32_t dst, int32_t src) { runner.cache().copy_block(dst, src); });
  blocks.set_on_allocate([this](int32_t block) { runner.cache().commit_block(block); });
  stats.kv_blocks_total = uint64_t(layout.n_blocks);
  if (config.spec.mode == SpecMode::Draft) {
    check_same_vocabulary(model, *config.spec.draft, "--draft-model");
    drafter = std::make_unique<DraftModelDrafter>(*config.spec.draft, config, layout.n_blocks, layout.context_limit,
                                                  runner.pool());
    speculator.set_draft_cost(&drafter->cost(), double(config.spec.draft->n_params()) / double(m.n_params()));
    stats.draft_kv_blocks_total = uint64_t(layout.n_blocks);
  }
  shared_stats = stats;
  thread = std::thread([this] { loop(); });
}

LlmEngine::Impl::~Impl() {
  {
    std::lock_guard lock(mu);
    stopping = true;
  }
  cv.notify_one();
  thread.join();
}

void LlmEngine::Impl::loop() {
  flush_denormals_here();
  for (;;) {
    bool stop = false, drop = false;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return stopping || drop_cache || !inbox.empty() || !cancels.empty() || has_work(); });
      inbox_taken.swap(inbox);
      cancels_taken.swap(cancels);
      stop = stopping;
      drop = std::exchange(drop_cache, false);
    }
    if (drop) blocks.drop_cached([this](int32_t b) { runner.cache().release_block(b); });
    for (Submission& s : inbox_taken) accept(s);
    inbox_taken.clear();
    for (RequestId id : cancels_taken) cancel(id);
    cancels_taken.clear();
    if (stop) {
      while (!live.empty()) cancel(live.begin()->first);
      publish();
      return;
    }
    expire(Clock::now());
    const bool ran = step();
    publish();
    // Work that cannot run yet (it should not happen: one sequence always
    // fits) must not spin: wait a little, or until a submit or cancel.
    if (!ran && has_work()) {
      std::unique_lock lock(mu);
      cv.wait_for(lock, std::chrono::milliseconds(5), [&] { return stopping || !inbox.empty() || !cancels.empty(); });
    }
  }
}

std::string LlmEngine::Impl::invalid(const Request& r) const {
  const int32_t vocab = model.config().vocab_size;
  if (r.prompt.empty()) return "the prompt has no tokens";
  for (int32_t t : r.prompt)
    if (t < 0 || t >= vocab)
      return "prompt token id " + std::to_string(t) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")";
  if (r.max_tokens < 0) return "max_tokens must be >= 0, got " + std::to_string(r.max_tokens);
  if (r.lora && &r.lora->base() != &model) return "the LoRA adapter " + r.lora->path() + " was loaded for another model";
  if (!std::isfinite(r.lora_scale)) return "lora_scale must be a finite number";
  if (r.top_logprobs > vocab)
    return "top_logprobs must be at most the vocabulary size " + std::to_string(vocab);
  if (r.pooling != Pooling::None && r.kv_retention && r.kv_retention->policy != KvPolicy::Full)
    return "an embedding request keeps its whole prompt: kv_retention must be full";
  const KvRetention kv = retention_of(r);
  if (kv.policy == KvPolicy::Full && int32_t(r.prompt.size()) > layout.context_limit)
    return "the prompt has " + std::to_string(r.prompt.size()) + " tokens, more than the context of " +
           std::to_string(layout.context_limit) + " tokens";
  try {
    validate_retention(kv, layout.context_limit);
    Sampler check(r.sampling, vocab);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Validation happens here, on the engine thread, so that every event of a
// request (an error too) reaches its sink from the same thread.
void LlmEngine::Impl::accept(Submission& s) {
  const std::string error = invalid(s.request);
  if (!error.empty()) {
    Event e;
    e.id = s.id;
    e.final = true;
    e.finish = FinishReason::Error;
    e.error = error;
    e.prompt_tokens = int32_t(s.request.prompt.size());
    ++stats.requests_failed;
    deliver_final(s.sink, e);
    return;
  }
  const KvRetention kv = retention_of(s.request);
  // Token storage reserved up front; past the context (retention policies) it grows.
  const bool embedding = s.request.pooling != Pooling::None;
  const int32_t max_new = embedding ? 0 : std::min(s.request.max_tokens, layout.context_limit);
  auto seq = std::make_unique<Sequence>(s.id, std::move(s.request), std::move(s.sink), arrivals++,
                                        model.tokenizer(), model.config().vocab_size, kv, max_new);
  Sequence& ref = *seq;
  if (ref.req.grammar) constrain(ref);
  live.emplace(s.id, std::move(seq));
  if (embedding) ref.pooled.resize(size_t(model.config().dim));
  else if (ref.req.max_tokens == 0) return finish(ref, FinishReason::Length);
  scheduler.add(&ref);
}

void LlmEngine::Impl::constrain(Sequence& seq) {
  const Tokenizer& tok = model.tokenizer();
  if (!grammar_vocab) grammar_vocab = std::make_shared<const GrammarVocab>(tok, model.config().vocab_size);
  const int32_t prev = seq.req.prompt.empty() ? -1 : seq.req.prompt.back();
  seq.constraint.emplace(seq.req.grammar, seq.req.grammar_triggers, grammar_vocab, tok, prev, seq.req.stop_ids,
                         seq.req.ignore_eos);
}

void LlmEngine::Impl::cancel(RequestId id) {
  const auto it = live.find(id);
  if (it != live.end()) finish(*it->second, FinishReason::Cancelled);
}

void LlmEngine::Impl::expire(Clock::time_point now) {
  for (auto* queue : {&scheduler.waiting(), &scheduler.running()})
    for (size_t i = queue->size(); i-- > 0;) {
      Sequence* seq = (*queue)[i];
      if (seq->req.deadline && *seq->req.deadline <= now) finish(*seq, FinishReason::Deadline);
    }
}

bool LlmEngine::Impl::step() {
  const auto now = Clock::now();
  const auto& batch = scheduler.schedule(now);
  if (batch.empty()) return false;
  for (const auto& s : batch)
    if (s.seq->first_step == Clock::time_point{}) s.seq->first_step = now;
  float* logits = nullptr;
  try {
    if (drafter) {
      drafter->draft(batch, scheduler);
      stats.spec_draft_us += uint64_t(drafter->last_seconds() * 1e6);
    }
    logits = runner.run(batch);
  } catch (const std::exception& e) {  // a bug, not a request's fault: fail what ran, keep serving
    for (const auto& s : batch) finish(*s.seq, FinishReason::Error, std::string("engine step failed: ") + e.what());
    return true;
  }
  scheduler.step_done();
  ++stats.steps;
  // Sampling may finish sequences (removing them from the scheduler, not
  // from this step's list, which stays valid until the next schedule()).
  const size_t vocab = size_t(model.config().vocab_size);
  draws.clear();
  embedded.clear();
  size_t rows = 0;
  for (const auto& [seq, n] : batch) {
    const int32_t ran = seq->spec.input.empty() ? n : 1;  // drafts are no prompt
    stats.prompt_tokens += uint64_t(std::max(0, std::min(seq->computed, seq->prompt_len) - (seq->computed - ran)));
    if (seq->pending() > 0) continue;
    if (seq->embedding()) {
      embedded.push_back(seq);  // no logits row: BatchForward pooled its states
    } else {
      draws.push_back({seq, logits + vocab * rows, -1, nullptr});
      rows += seq->spec.input.empty() ? 1 : size_t(n);
    }
  }
  draw_tokens();
  for (const Draw& d : draws) sample(d);
  for (Sequence* seq : embedded) finish(*seq, FinishReason::Stop);
  const auto took = Clock::now() - now;
  // The draft model's forwards are priced apart (Speculator::draft_seconds).
  scheduler.step_timed(std::chrono::duration<double>(took).count() - (drafter ? drafter->last_seconds() : 0.0));
  stats.step_us += uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(took).count());
  stats.prefill_budget = scheduler.prefill_budget();
  stats.step_error_us = int64_t(scheduler.step_error() * 1e6);
  return true;
}

// The draws of the sequences that asked for no log-probabilities, split over
// the kernel threads: every sequence has its own sampler, and a top-p draw
// over 32 000 tokens costs tens of microseconds, which this thread alone
// paid for the whole batch while the others waited (docs/performance.md).
// The rest of sample() touches the engine's state and stays on this thread.
void LlmEngine::Impl::draw_tokens() {
  if (draws.size() < 2) return;  // nothing to split: sample() draws a lone token itself
  runner.pool().parallel_for(int64_t(draws.size()), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      Draw& d = draws[size_t(i)];
      // Log-probabilities need `penalised`, verification draws row by row: in sample().
      if (d.seq->req.top_logprobs >= 0 || !d.seq->spec.input.empty()) continue;
      try {
        d.token = d.seq->draw(d.logits);
      } catch (...) {
        d.error = std::current_exception();  // thrown where a serial draw would have thrown
      }
    }
  });
}

// A draw that fails (a grammar whose parses outgrow their bound, a grammar
// that leaves no token) fails its request only.
void LlmEngine::Impl::sample(const Draw& d) {
  try {
    sample_token(d);
  } catch (const std::exception& e) {
    finish(*d.seq, FinishReason::Error, std::string("sampling failed: ") + e.what());
  }
}

void LlmEngine::Impl::sample_token(const Draw& d) {
  if (d.error) std::rethrow_exception(d.error);
  if (!d.seq->spec.input.empty()) return verify(d);
  Sequence& seq = *d.seq;
  emit(seq, choose(seq, d.logits, d.token));
}

// The rows of a speculating sequence, one after the other, through the
// sampling path of a plain decode: row i draws the token after input[i],
// with the penalties and grammar state of the tokens before it. A drawn
// token equal to the next draft keeps it and goes on to the next row; the
// first that differs is the token drawn in its place. Every kept token costs
// the sampler one draw, as without speculation, so the output is the same
// token for token, and its distribution is the target's: a draft x is kept
// with probability p(x), and otherwise the token follows p without x,
// renormalised (the rejection rule for a drafter that proposes one token).
// A draft model's sampled drafts are drawn with the uniforms these rows will
// use (draft_draw.h), so a draft close to the target is kept most times.
void LlmEngine::Impl::verify(const Draw& d) {
  Sequence& seq = *d.seq;
  const int32_t drafted = seq.spec.drafts();
  const size_t vocab = size_t(model.config().vocab_size);
  stats.spec_drafted += uint64_t(drafted);
  ++stats.spec_verifications;
  int32_t accepted = 0;
  for (int32_t i = 0; i <= drafted; ++i) {
    float* row = d.logits + vocab * size_t(i);
    const int32_t token = choose(seq, row, -1);
    const bool kept = i < drafted && token == seq.spec.input[size_t(i) + 1];
    ++stats.spec_tokens;  // counted before emit(), whose final event publishes them
    stats.spec_accepted += kept ? 1 : 0;
    if (!emit(seq, token)) return;  // finished (stop, length, grammar end): `seq` is gone
    if (!kept) break;               // the first difference ends the run
    ++accepted;
    scheduler.spec_kept(&seq);
  }
  Speculator::observe(seq, drafted, accepted);
  scheduler.spec_done(&seq);
  if (drafter) drafter->verified(seq);
}

// `penalised` for emit(), when log-probabilities are wanted: the logits
// penalised and masked, before temperature, as sample() sees them.
void LlmEngine::Impl::logprob_logits(Sequence& seq, const float* logits) {
  if (seq.req.top_logprobs < 0) return;
  std::copy_n(logits, model.config().vocab_size, penalised.data());
  seq.sampler.apply_penalties(penalised.data());
  if (seq.constraint) seq.constraint->mask(penalised.data());
}

// The token one row of logits gives (`drawn`: the token if drawn ahead, else
// -1), with `penalised` filled for emit() when log-probabilities are wanted.
int32_t LlmEngine::Impl::choose(Sequence& seq, float* logits, int32_t drawn) {
  logprob_logits(seq, logits);
  return drawn >= 0 ? drawn : seq.draw(logits);
}

// The chosen token's event, or the end of the sequence; false when it
// finished (and is gone).
bool LlmEngine::Impl::emit(Sequence& seq, int32_t token) {
  const int32_t vocab = model.config().vocab_size;
  Event e;
  e.id = seq.id;
  e.scheduled = seq.first_step;
  const auto& stop_ids = seq.req.stop_ids;
  if ((!seq.req.ignore_eos && model.tokenizer().is_eog(token)) ||
      std::find(stop_ids.begin(), stop_ids.end(), token) != stop_ids.end()) {
    finish(seq, FinishReason::Stop);
    return false;
  }
  if (seq.req.top_logprobs >= 0)
    e.logprob = token_logprobs(penalised.data(), vocab, token, seq.req.top_logprobs, e.top_logprobs);
  seq.sampler.accept(token);
  if (seq.constraint) seq.constraint->accept(token);
  seq.tokens.push_back(token);
  ++stats.generated_tokens;
  e.token = token;
  e.text = seq.stops.push(seq.detok.push(token));
  deliver(seq.sink, e);
  if (seq.stops.stopped() || (seq.constraint && seq.constraint->must_end())) {
    finish(seq, FinishReason::Stop);
    return false;
  }
  // Under Full the next token needs a position inside the context.
  if (seq.generated() >= seq.req.max_tokens ||
      (seq.full_kv() && int32_t(seq.tokens.size()) >= layout.context_limit)) {
    finish(seq, FinishReason::Length);
    return false;
  }
  return true;
}

// The final event, with any text still held back (not after a stop string
// or when the client is gone), then the sequence and its blocks go.
void LlmEngine::Impl::finish(Sequence& seq, FinishReason why, const std::string& error) {
  Event e;
  e.id = seq.id;
  e.final = true;
  e.finish = why;
  e.error = error;
  e.stop_string = seq.stops.matched();
  if (!seq.stops.stopped() && why != FinishReason::Cancelled && why != FinishReason::Error)
    e.text = seq.stops.push(seq.detok.flush()) + seq.stops.flush();
  e.prompt_tokens = seq.prompt_len;
  e.completion_tokens = seq.generated();
  if (seq.embedding() && why == FinishReason::Stop) e.embedding = pooled_state(seq);
  e.cached_tokens = seq.cached_tokens;
  e.scheduled = seq.first_step;
  if (why == FinishReason::Cancelled) ++stats.requests_cancelled;
  else if (why == FinishReason::Error) ++stats.requests_failed;
  else ++stats.requests_finished;
  scheduler.remove(&seq);
  if (drafter) drafter->release(seq);
  const EventSink sink = std::move(seq.sink);
  live.erase(seq.id);
  deliver_final(sink, e);
}

// Mean pooling summed the prompt's states; the others took one.
std::vector<float> LlmEngine::Impl::pooled_state(const Sequence& seq) const {
  std::vector<float> out = seq.pooled;
  if (seq.req.pooling == Pooling::Mean)
    for (float& v : out) v /= float(seq.prompt_len);
  return out;
}

KvRetention LlmEngine::Impl::retention_of(const Request& r) const {
  return r.pooling != Pooling::None ? KvRetention{} : r.kv_retention.value_or(config.kv_retention);
}

// Whoever waits for a final event sees the stats (memory freed, counters)
// that include it.
void LlmEngine::Impl::deliver_final(const EventSink& sink, const Event& e) {
  publish();
  deliver(sink, e);
}

// A sink must not throw; if one does, the engine goes on serving the others.
void LlmEngine::Impl::deliver(const EventSink& sink, const Event& e) {
  if (!sink) return;
  try {
    sink(e);
  } catch (...) {
  }
}

void LlmEngine::Impl::publish() {
  stats.running = int32_t(scheduler.running().size());
  stats.kv_blocks_used = uint64_t(blocks.used_blocks());
  stats.kv_blocks_cached = uint64_t(blocks.cached_blocks());
  stats.kv_blocks_committed = uint64_t(runner.cache().committed_blocks());
  if (drafter) stats.draft_kv_blocks_used = uint64_t(drafter->blocks().used_blocks());
  stats.prefix_cache_hit_tokens = scheduler.prefix_hit_tokens();
  stats.prefix_cache_query_tokens = scheduler.prefix_query_tokens();
  stats.preemptions = scheduler.preemptions();
  std::lock_guard lock(mu);
  stats.waiting = int32_t(scheduler.waiting().size() + inbox.size());
  shared_stats = stats;
}

LlmEngine::LlmEngine(const Model& model, EngineConfig config) : impl_(std::make_unique<Impl>(model, config)) {}

LlmEngine::~LlmEngine() = default;

RequestId LlmEngine::submit(Request request, EventSink sink) {
  std::vector<std::pair<Request, EventSink>> one;
  one.emplace_back(std::move(request), std::move(sink));
  return submit_all(std::move(one)).front();
}

std::vector<RequestId> LlmEngine::submit_all(std::vector<std::pair<Request, EventSink>> requests) {
  std::vector<RequestId> ids;
  ids.reserve(requests.size());
  {
    std::lock_guard lock(impl_->mu);
    for (auto& [request, sink] : requests) {
      ids.push_back(impl_->next_id.fetch_add(1));
      impl_->inbox.push_back({ids.back(), std::move(request), std::move(sink)});
    }
  }
  impl_->cv.notify_one();
  return ids;
}

void LlmEngine::drop_cached_blocks() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->drop_cache = true;
  }
  impl_->cv.notify_one();
}

void LlmEngine::cancel(RequestId id) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->cancels.push_back(id);
  }
  impl_->cv.notify_one();
}

EngineStats LlmEngine::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->shared_stats;
}

const Model& LlmEngine::model() const { return impl_->model; }
const EngineConfig& LlmEngine::config() const { return impl_->config; }

}  // namespace parley
