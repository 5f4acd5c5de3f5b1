#pragma once
// The serving engine: one resident model, many concurrent requests, batched
// at the level of iterations (continuous batching) on an engine thread.
// Thread-safe: submit / cancel / stats may be called from any thread.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/request.h"
#include "engine/speculation.h"
#include "kernels/dtype.h"

namespace parley {
class Model;

enum class SchedulePolicy {
  Fcfs,       // priority, then arrival
  CostAware,  // priority, then smallest (prompt + max_tokens) first, with aging
};

struct EngineConfig {
  int32_t threads = 0;             // kernel threads; 0 = physical cores
  int32_t max_running = 64;        // sequences decoded together at most
  // Tokens per engine step (decodes + prefill chunks). Large steps give a
  // burst of prompts its first tokens soonest; every step carries all
  // decodes, so smaller ones keep the token stream steadier (for llama-110m
  // on 2 cores: inter-token P99 about 250 ms at 512, 70-100 at 128, under
  // 60 at 64; docs/performance.md). Small steps cost no prefill speed there.
  int32_t max_batch_tokens = 512;
  // Step-time target in ms (0 = off): each step carries every decode, then
  // only as many prefill tokens as a fit of recent steps' times predicts to
  // fit in this time (at least one KV block's worth, so prompts still
  // advance), within max_batch_tokens. The fit follows the host's speed and
  // the load, so inter-token latency stays near the target (docs/performance.md,
  // "The engine step"); prefill takes what the decodes leave.
  double max_step_ms = 0;
  uint64_t kv_memory_bytes = 0;    // KV pool size; 0 = a default fraction of RAM
  DType kv_type = DType::F16;      // F32, F16 or Q8_0
  // Write the whole KV pool at start (on huge pages where the kernel gives
  // them), as llama.cpp does, instead of committing blocks as they are first
  // used: no page faults while serving, for a slower start and the pool's
  // full size in RSS from the first second (docs/performance.md).
  bool kv_prefault = false;
  int32_t block_size = 16;         // tokens per KV block
  bool prefix_cache = true;        // automatic prefix caching
  SchedulePolicy policy = SchedulePolicy::Fcfs;
  int32_t max_context = 0;         // per-sequence limit; 0 = the model's context length
  KvRetention kv_retention;        // default for requests that set none
  // Speculative decoding (speculation.h); off by default. Sequences under a
  // retention policy other than full, embedding requests and requests with
  // `speculative` false never speculate. With a draft model (SpecMode::Draft)
  // kv_memory_bytes holds both models' pools, of the same number of blocks.
  SpecConfig spec;
};

struct EngineStats {
  int32_t waiting = 0, running = 0;
  uint64_t kv_blocks_total = 0, kv_blocks_used = 0, kv_blocks_cached = 0;
  uint64_t kv_blocks_committed = 0;  // blocks whose memory is resident (used once, not released since)
  uint64_t prefix_cache_hit_tokens = 0, prefix_cache_query_tokens = 0;
  uint64_t requests_finished = 0, requests_cancelled = 0, requests_failed = 0, preemptions = 0;
  uint64_t prompt_tokens = 0, generated_tokens = 0, steps = 0;
  uint64_t step_us = 0;        // wall time spent in steps (scheduling, forward pass, sampling)
  int32_t prefill_budget = 0;  // prefill tokens the last step allowed (max_step_ms's fit, else max_batch_tokens)
  int64_t step_error_us = 0;   // RMS of the step-time fit's recent prediction errors (max_step_ms keeps twice this free)
  // Speculation: drafts verified, drafts kept, verifications (one sequence
  // in one step) and the tokens they produced (kept drafts + one each).
  uint64_t spec_drafted = 0, spec_accepted = 0, spec_verifications = 0, spec_tokens = 0;
  // A draft model's KV pool (0 without one) and the wall time of its forwards.
  uint64_t draft_kv_blocks_total = 0, draft_kv_blocks_used = 0;
  uint64_t spec_draft_us = 0;
};

class LlmEngine {
 public:
  LlmEngine(const Model& model, EngineConfig config);
  ~LlmEngine();  // cancels what is left (final events delivered) and joins the engine thread
  LlmEngine(const LlmEngine&) = delete;
  LlmEngine& operator=(const LlmEngine&) = delete;

  // Queues a request; events go to `sink`. Invalid requests (empty prompt,
  // prompt longer than the context, bad sampling params) are answered with a
  // final Error event rather than an exception.
  RequestId submit(Request request, EventSink sink);
  // Queues several requests at once: the engine sees all of them at its next
  // step, so they are admitted together (a batch of prompts, n choices)
  // rather than as they happen to arrive. Ids in order.
  std::vector<RequestId> submit_all(std::vector<std::pair<Request, EventSink>> requests);
  // Cancels a waiting or running request; its memory is freed within one
  // step and its final event says Cancelled. Unknown/finished ids are ignored.
  void cancel(RequestId id);
  // Empties the prefix cache: at its next step the engine thread forgets
  // every cached block no sequence holds (the memory watchdog's first
  // resort); running requests keep theirs.
  void drop_cached_blocks();
  EngineStats stats() const;
  const Model& model() const;
  const EngineConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parley
