#pragma once
// Speculative decoding with a draft model (`--draft-model`, SpecMode::Draft):
// a smaller model of the target's vocabulary proposes each speculating
// sequence's next k tokens, which the target's step verifies as it verifies
// any drafts (speculation.h). The draft model has its own KV pool, as many
// blocks as the target's (engine_limits.h splits the KV memory so), and
// follows each sequence's tokens lazily: the first draft forward of a step
// evaluates what the draft has not seen of every drafting sequence (its
// prompt, chunked within the step's token budget, then the tokens kept
// since) and draws its first draft; each further forward draws one more
// draft for every sequence still drafting: k small batched forwards through
// BatchForward, as the target's step. After verification the draft's KV is
// cut back to the tokens kept.
//
// A draft is drawn as the sequence would draw it from the target: the
// draft's logits go through copies of the sequence's penalties, logit bias
// and grammar state, advanced by the earlier drafts. Greedy requests draft
// the argmax; sampled ones draw from that distribution q with the uniforms
// the target's sampler will use at those positions (draft_draw.h). Either
// way verification is the point-mass rule: the target draws as without
// speculation and a draft is kept when it is that token (identical output).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "engine/block_manager.h"
#include "engine/sampler.h"
#include "engine/scheduler.h"
#include "engine/step_cost.h"
#include "engine/token_constraint.h"
#include "kernels/thread_pool.h"
#include "model/batch_forward.h"
#include "model/kv_cache.h"

namespace parley {

// A sequence's state in the draft model (SpecState::draft, made on its first draft).
struct DraftState {
  BlockTable table;      // its blocks in the draft's pool
  int32_t computed = 0;  // leading tokens whose draft K/V are computed
  std::optional<Sampler> sampler;  // copies of the sequence's, advanced by this step's drafts
  std::optional<TokenConstraint> constraint;
  std::vector<float> q;  // sampled requests: the draft's distribution at the position drafted
  std::mt19937_64 rng;   // sampled requests: a copy of the target sampler's generator
};

class DraftModelDrafter {
 public:
  // `n_blocks` and `context_limit`: the target's (KvLayout); the pool's
  // threads are the target runner's.
  DraftModelDrafter(const Model& draft, const EngineConfig& config, int64_t n_blocks, int32_t context_limit,
                    ThreadPool& pool);

  // Drafts for the batch's sequences that plan some (SpecState::want). One
  // whose draft KV finds no free blocks, or whose unseen tokens do not fit
  // this step (it catches up a chunk of them), drafts fewer or none
  // (Scheduler::drafted). Throws what BatchForward throws.
  void draft(const std::vector<ScheduledSeq>& batch, Scheduler& scheduler);
  // After a verification: the draft K/V past the sequence's kept tokens go.
  void verified(Sequence& seq);
  void release(Sequence& seq);  // the sequence ended: its blocks go back

  // Wall time of the last draft() (the engine prices it apart from the target's step).
  double last_seconds() const { return last_seconds_; }
  const StepCost& cost() const { return cost_; }  // a draft forward's seconds by (single tokens, other tokens)
  const BlockManager& blocks() const { return blocks_; }
  const KvCache& cache() const { return cache_; }

 private:
  struct Drafting {
    Sequence* seq;
    int32_t want;  // drafts planned
    bool done;     // no more drafts (an end-of-text or grammar end drafted, or a draw failed)
  };
  DraftState& state(Sequence& seq);
  void plan(const std::vector<ScheduledSeq>& batch, Scheduler& scheduler);
  const float* forward();
  void draw(Drafting& d, float* logits);

  const Model& model_;
  KvCache cache_;
  BlockManager blocks_;
  BatchForward forward_;
  StepCost cost_;
  int32_t vocab_;
  std::vector<BatchChunk> chunks_;
  std::vector<Drafting> drafting_;
  std::vector<std::pair<DraftState*, int32_t>> catching_up_;  // chunks without drafts: (state, tokens)
  double last_seconds_ = 0;
};

}  // namespace parley
