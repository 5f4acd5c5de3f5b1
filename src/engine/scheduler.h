#pragma once
// Iteration-level (continuous) batching: before every engine step, decides
// which sequences run and how many of their tokens, within a token budget
// (max_batch_tokens) and max_running sequences. Decodes go first, then
// prefill chunks (chunked prefill: a long prompt never stalls the decodes),
// then waiting requests are admitted in policy order. Under a step-time
// target (max_step_ms) the prefill tokens are further limited to what the
// fit of past steps' times (StepCost) predicts fits in it. When KV blocks run out,
// the lowest-priority, latest-arrived running sequence is preempted: its
// blocks are freed and it is recomputed later (its tokens so far become its
// prompt; the prefix cache often still holds them). With speculation on,
// decodes whose drafts pay (speculation.h) carry them after every decode has
// its token, within the budget and only in blocks free without preempting.
#include <cstdint>
#include <vector>

#include "engine/block_manager.h"
#include "engine/llm_engine.h"
#include "engine/sequence.h"
#include "engine/step_cost.h"

namespace parley {

struct ScheduledSeq {
  Sequence* seq;
  int32_t n;  // tokens evaluated this step, from seq->computed (speculating: seq->spec.input's)
};

// Waiting-queue order. Fcfs: higher priority first, then arrival. CostAware:
// higher priority first, then the smaller (tokens to evaluate + max_tokens),
// then arrival. Under both, waiting ages a request: every kAgingSeconds adds
// one priority level, and under CostAware also divides its cost by
// (1 + waited / kAgingSeconds), so nothing waits forever.
constexpr double kAgingSeconds = 2.0;
bool runs_before(const Sequence& a, const Sequence& b, SchedulePolicy policy, Clock::time_point now);

class Scheduler {
 public:
  // `spec`: null or off for no speculation; drafts stay below `context_limit` positions.
  Scheduler(const EngineConfig& config, BlockManager& blocks, const Speculator* spec = nullptr,
            int32_t context_limit = 0);

  void add(Sequence* seq);     // joins the waiting queue
  void remove(Sequence* seq);  // leaves whichever queue; its blocks are released
  // This step's work (empty when there is none).
  const std::vector<ScheduledSeq>& schedule(Clock::time_point now);
  // Records that the scheduled tokens were evaluated (commits full blocks to
  // the prefix cache). Of a speculating sequence only its last token counts:
  // its drafts count once kept (spec_kept).
  void step_done();
  // A speculating sequence kept its next draft: its K/V counts (and its
  // block, once full, joins the prefix cache, even if the sequence ends now).
  void spec_kept(Sequence* seq);
  // Its verification is over: the rejected positions' blocks go back.
  void spec_done(Sequence* seq);
  // A draft model drew fewer drafts than this step planned for the sequence
  // (seq->spec.input holds them; none: it only decodes): its share of the
  // step and its blocks follow.
  void drafted(Sequence* seq);
  // The wall time of the step just done, for the step-time target's fit.
  void step_timed(double seconds);

  const std::vector<Sequence*>& waiting() const { return waiting_; }
  const std::vector<Sequence*>& running() const { return running_; }
  uint64_t preemptions() const { return preemptions_; }
  uint64_t prefix_hit_tokens() const { return hit_tokens_; }
  uint64_t prefix_query_tokens() const { return query_tokens_; }
  int32_t prefill_budget() const { return prefill_budget_; }  // the last schedule()'s
  double step_error() const { return cost_.error(); }         // seconds: the step-time fit's (StepCost::error)

 private:
  void schedule_running(bool decodes);
  int32_t speculate();
  struct PositionPrice {
    double theta = 0;    // a drafted position, in units of one decode's share of the step
    double token_s = 0;  // one more token of the target's step, seconds
    double share_s = 0;  // one decode's share of a decode step, seconds (0: not known yet)
  };
  PositionPrice position_price() const;
  int32_t spec_room(const Sequence* seq) const;
  int32_t prefill_allowance(int32_t decodes, int32_t drafts) const;
  bool make_room(Sequence* seq, int32_t n);
  bool reserve(Sequence* seq, int32_t n);
  void preempt(Sequence* seq);
  void admit_waiting(Clock::time_point now);
  enum class Admission { Admitted, Deferred, NoRoom };
  Admission try_admit(Sequence* seq);
  bool being_computed(uint64_t block_hash) const;
  int32_t chunk(const Sequence* seq) const;
  void insert_running(Sequence* seq);

  const EngineConfig config_;
  BlockManager& blocks_;
  const Speculator* spec_;
  int32_t context_limit_;
  std::vector<Sequence*> waiting_, running_;  // running_: highest priority first
  std::vector<ScheduledSeq> batch_;
  int32_t budget_ = 0;
  int32_t decodes_ = 0;  // this step's decodes: batch_'s first entries
  int32_t prefill_budget_ = 0;
  StepCost cost_;
  bool preempted_ = false;
  double draft_seconds_ = 0;  // the draft model's forwards this step plans, predicted
  uint64_t spec_steps_ = 0;  // steps with decodes, for the probes (speculation.h)
  uint64_t preemptions_ = 0, hit_tokens_ = 0, query_tokens_ = 0;
};

}  // namespace parley
