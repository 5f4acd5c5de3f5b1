#include "engine/draft_model_drafter.h"

#include <algorithm>
#include <utility>

#include "engine/draft_draw.h"
#include "model/model.h"

namespace parley {
namespace {

// Mixed into a request's seed for its drafts' RNG, so that it draws apart
// from the sampler (seeded with the seed itself).

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

DraftModelDrafter::DraftModelDrafter(const Model& draft, const EngineConfig& config, int64_t n_blocks,
                                     int32_t context_limit, ThreadPool& pool)
    : model_(draft),
      cache_(draft.config(), config.kv_type, config.block_size, n_blocks,
             config.kv_prefault ? KvCache::Commit::Now : KvCache::Commit::OnFirstUse),
      // No prefix cache: a draft block is cheap to recompute, and rolled-back
      // drafts would have to stay out of it.
      blocks_(int32_t(n_blocks), config.block_size, false),
      forward_(draft, pool, cache_, config.max_batch_tokens, config.max_running, context_limit),
      vocab_(draft.config().vocab_size) {
  blocks_.set_on_allocate([this](int32_t block) { cache_.commit_block(block); });
  chunks_.reserve(size_t(config.max_running));
  drafting_.reserve(size_t(config.max_running));
  catching_up_.reserve(size_t(config.max_running));
}

DraftState& DraftModelDrafter::state(Sequence& seq) {
  if (!seq.spec.draft) seq.spec.draft = std::make_unique<DraftState>();
  return *seq.spec.draft;
}

void DraftModelDrafter::draft(const std::vector<ScheduledSeq>& batch, Scheduler& scheduler) {
  const auto start = std::chrono::steady_clock::now();
  last_seconds_ = 0;
  plan(batch, scheduler);
  if (chunks_.empty()) return;
  // Round 1 carries the catch-up chunks; round j draws draft j.
  for (int32_t j = 1; !chunks_.empty(); ++j) {
    float* logits = const_cast<float*>(forward());  // ours until the next forward
    for (auto& [d, n] : catching_up_) d->computed += n;
    catching_up_.clear();
    chunks_.clear();
    size_t row = 0;
    for (Drafting& d : drafting_) {
      if (d.done || int32_t(d.seq->spec.input.size()) != j) continue;  // not in this round
      DraftState& s = *d.seq->spec.draft;
      s.computed = int32_t(d.seq->tokens.size()) + j - 1;  // everything up to draft j - 1 is in
      draw(d, logits + size_t(vocab_) * row++);
      d.done = d.done || j == d.want;
      if (d.done) continue;
      BatchChunk c;
      c.tokens = &d.seq->spec.input.back();
      c.n = 1;
      c.pos = s.computed;
      c.blocks = s.table.blocks.data();
      c.logits = true;
      chunks_.push_back(c);
    }
  }
  for (Drafting& d : drafting_)
    if (int32_t(d.seq->spec.input.size()) != d.want + 1) scheduler.drafted(d.seq);
  last_seconds_ = seconds_since(start);
}

// Round 1's chunks: for each sequence that plans drafts, the tokens its
// draft K/V lack, within the draft forward's budget. One that does not fit
// whole catches up what fits and drafts nothing this step.
void DraftModelDrafter::plan(const std::vector<ScheduledSeq>& batch, Scheduler& scheduler) {
  chunks_.clear();
  drafting_.clear();
  catching_up_.clear();
  int32_t budget = forward_.max_tokens();
  for (const ScheduledSeq& s : batch) {
    Sequence& seq = *s.seq;
    const int32_t want = std::exchange(seq.spec.want, 0);
    if (want == 0 || seq.spec.input.empty()) continue;
    DraftState& d = state(seq);
    const int32_t size = int32_t(seq.tokens.size());
    d.computed = std::min(d.computed, size - 1);
    const int32_t lag = size - d.computed;
    const int32_t n = std::min(lag, budget);
    const bool drafts = n == lag;
    // Draft j (j < want) is evaluated at position size + j - 1.
    const int32_t end = drafts ? size + want - 1 : d.computed + n;
    if (n == 0 || !blocks_.reserve(d.table, d.computed, end)) {
      seq.spec.input.clear();
      scheduler.drafted(&seq);
      continue;
    }
    BatchChunk c;
    c.tokens = seq.tokens.data() + d.computed;
    c.n = n;
    c.pos = d.computed;
    c.blocks = d.table.blocks.data();
    c.logits = drafts;
    chunks_.push_back(c);
    budget -= n;
    if (!drafts) {
      catching_up_.emplace_back(&d, n);
      seq.spec.input.clear();
      scheduler.drafted(&seq);
      continue;
    }
    d.sampler = seq.sampler;  // assignments: the buffers of earlier steps are reused
    if (seq.constraint) d.constraint = seq.constraint;
    d.rng = seq.sampler.rng();  // the uniforms the target will draw these positions with
    if (seq.req.sampling.temperature > 0.0f) d.q.resize(size_t(vocab_));
    drafting_.push_back({&seq, want, false});
  }
}

const float* DraftModelDrafter::forward() {
  const auto start = std::chrono::steady_clock::now();
  const float* logits = forward_.step(chunks_.data(), int32_t(chunks_.size()));
  int32_t tokens = 0;
  for (const BatchChunk& c : chunks_) tokens += c.n;
  const auto chunks = int32_t(chunks_.size());
  cost_.observe(chunks, tokens - chunks, seconds_since(start));
  return logits;
}

// A sequence's next draft from the draft's logits, through the sequence's
// sampling transformations as they stand after its earlier drafts. A draft that
// ends the text (end of generation, a stop id, the grammar's end) is the last.
void DraftModelDrafter::draw(Drafting& d, float* logits) {
  Sequence& seq = *d.seq;
  DraftState& s = *seq.spec.draft;
  int32_t x = -1;
  try {
    if (s.constraint) s.constraint->mask(logits);
    if (seq.req.sampling.temperature > 0.0f) {
      s.sampler->probabilities(logits, s.q.data());
      x = draw_index(s.q.data(), vocab_, uniform01(s.rng));
    } else {
      x = s.sampler->sample(logits);
    }
  } catch (const std::exception&) {  // no token allowed: the drafts end here
    d.done = true;
    return;
  }
  seq.spec.input.push_back(x);
  s.sampler->accept(x);
  if (s.constraint) s.constraint->accept(x);
  const auto& stops = seq.req.stop_ids;
  d.done = (!seq.req.ignore_eos && model_.tokenizer().is_eog(x)) ||
           std::find(stops.begin(), stops.end(), x) != stops.end() || (s.constraint && s.constraint->must_end());
}

void DraftModelDrafter::verified(Sequence& seq) {
  DraftState& d = *seq.spec.draft;
  d.computed = std::min(d.computed, seq.computed);
  blocks_.truncate(d.table, d.computed);
}

void DraftModelDrafter::release(Sequence& seq) {
  if (seq.spec.draft) blocks_.release(seq.spec.draft->table);
}

}  // namespace parley
