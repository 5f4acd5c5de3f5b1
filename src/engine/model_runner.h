#pragma once
// Runs one engine step on the model: turns the scheduler's choice into batch
// chunks (where each sequence's tokens go in the paged cache) and evaluates
// them with BatchForward. Owns the kernel threads and the KV pool.
#include <cstdint>
#include <vector>

#include "engine/scheduler.h"
#include "kernels/thread_pool.h"
#include "model/batch_forward.h"
#include "model/kv_cache.h"

namespace parley {

class ModelRunner {
 public:
  ModelRunner(const Model& model, const EngineConfig& config, int64_t n_blocks, int32_t context_limit);

  // Logits (vocab_size floats per row, writable, valid until the next call)
  // of the sequences whose pending tokens all ran, in batch order: one row,
  // or one per position of a speculating sequence (its spec.input).
  float* run(const std::vector<ScheduledSeq>& batch);
  KvCache& cache() { return cache_; }
  ThreadPool& pool() { return pool_; }

 private:
  ThreadPool pool_;
  KvCache cache_;
  BatchForward forward_;
  std::vector<BatchChunk> chunks_;
};

}  // namespace parley
