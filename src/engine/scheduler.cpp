#include "engine/scheduler.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace parley {
namespace {

double waited_ages(const Sequence& s, Clock::time_point now) {
  return std::max(0.0, std::chrono::duration<double>(now - s.submitted).count() / kAgingSeconds);
}

double aged_priority(const Sequence& s, Clock::time_point now) {
  return double(s.req.priority) + std::floor(waited_ages(s, now));
}

double aged_cost(const Sequence& s, Clock::time_point now) {
  const double work = double(s.pending()) + double(std::max(0, s.req.max_tokens - s.generated()));
  return work / (1.0 + waited_ages(s, now));
}

// Running order (no aging): priority, then arrival. The last is preempted first.
bool outranks(const Sequence* a, const Sequence* b) {
  return a->req.priority != b->req.priority ? a->req.priority > b->req.priority : a->arrival < b->arrival;
}

}  // namespace

bool runs_before(const Sequence& a, const Sequence& b, SchedulePolicy policy, Clock::time_point now) {
  const double pa = aged_priority(a, now), pb = aged_priority(b, now);
  if (pa != pb) return pa > pb;
  if (policy == SchedulePolicy::CostAware) {
    const double ca = aged_cost(a, now), cb = aged_cost(b, now);
    if (ca != cb) return ca < cb;
  }
  return a.arrival < b.arrival;
}

Scheduler::Scheduler(const EngineConfig& config, BlockManager& blocks, const Speculator* spec, int32_t context_limit)
    : config_(config), blocks_(blocks), spec_(spec && spec->enabled() ? spec : nullptr), context_limit_(context_limit) {
  waiting_.reserve(256);
  running_.reserve(size_t(config.max_running));
  batch_.reserve(size_t(config.max_running));
}

void Scheduler::add(Sequence* seq) {
  // Block tables sized once: no allocation as the sequence grows.
  const int32_t bs = blocks_.block_size();
  const size_t slots = seq->full_kv() ? seq->tokens.capacity() : size_t(seq->kept.capacity());
  seq->table.blocks.reserve(slots / size_t(bs) + 2);
  seq->table.hashes.reserve(slots / size_t(bs) + 2);
  seq->table.root = seq->req.lora ? seq->req.lora->id() : 0;
  waiting_.push_back(seq);
}

void Scheduler::remove(Sequence* seq) {
  for (auto* queue : {&waiting_, &running_}) {
    const auto it = std::find(queue->begin(), queue->end(), seq);
    if (it != queue->end()) queue->erase(it);
  }
  blocks_.release(seq->table);
}

const std::vector<ScheduledSeq>& Scheduler::schedule(Clock::time_point now) {
  batch_.clear();
  budget_ = config_.max_batch_tokens;
  preempted_ = false;
  decodes_ = 0;
  schedule_running(true);
  decodes_ = int32_t(batch_.size());  // one token each
  const int32_t drafts = speculate();
  prefill_budget_ = std::min(budget_, prefill_allowance(decodes_, drafts));
  budget_ = prefill_budget_;
  schedule_running(false);
  // After a preemption memory is short: admitting more would only thrash.
  if (!preempted_) admit_waiting(now);
  return batch_;
}

void Scheduler::step_done() {
  for (const ScheduledSeq& s : batch_) {
    s.seq->computed += s.seq->spec.input.empty() ? s.n : 1;
    if (s.seq->full_kv()) blocks_.commit(s.seq->table, s.seq->tokens.data(), s.seq->computed);
  }
}

void Scheduler::spec_kept(Sequence* seq) {
  ++seq->computed;
  blocks_.commit(seq->table, seq->tokens.data(), seq->computed);
}

void Scheduler::spec_done(Sequence* seq) {
  blocks_.truncate(seq->table, seq->computed);
  seq->spec.input.clear();
}

void Scheduler::drafted(Sequence* seq) {
  auto& input = seq->spec.input;
  if (input.size() < 2) input.clear();
  const auto it = std::find_if(batch_.begin(), batch_.end(), [&](const ScheduledSeq& s) { return s.seq == seq; });
  if (it == batch_.end()) return;
  it->n = std::max<int32_t>(1, int32_t(input.size()));
  blocks_.truncate(seq->table, seq->computed + it->n);
}

// Drafts for the decodes just scheduled, while the budget lasts; each
// speculating sequence's extra positions only in blocks that are free now.
int32_t Scheduler::speculate() {
  if (!spec_ || decodes_ == 0) return 0;
  // Probes serve the fit behind adaptive drafting; fixed drafting drafts its k.
  const bool probe = ++spec_steps_ % kProbeEvery == 0 && spec_->config().adaptive;
  const PositionPrice price = probe ? PositionPrice{} : position_price();
  int32_t extra = 0;
  std::array<int32_t, kMaxSpecTokens + 1> drafting{};  // [j]: sequences drafting at least j tokens
  for (int32_t i = 0; i < decodes_ && budget_ > 0; ++i) {
    Sequence* seq = batch_[size_t(i)].seq;
    if (probe ? !spec_->probes(*seq) : !spec_->catch_up_pays(*seq, price.theta, price.token_s, price.share_s)) continue;
    const int32_t room = std::min({budget_, spec_room(seq), probe ? 1 : budget_});
    const int32_t k = spec_->draft(*seq, price.theta, room);
    if (k == 0) continue;
    if (!blocks_.reserve(seq->table, seq->computed, seq->computed + 1 + k)) {
      seq->spec.input.clear();
      seq->spec.want = 0;
      continue;
    }
    batch_[size_t(i)].n += k;
    budget_ -= k;
    extra += k;
    for (int32_t j = 1; j <= k; ++j) ++drafting[size_t(j)];
  }
  // A draft model draws draft j for all of them in one forward.
  draft_seconds_ = 0;
  for (size_t j = 1; j < drafting.size() && drafting[j] > 0; ++j) draft_seconds_ += spec_->draft_seconds(drafting[j]);
  return extra;
}

// One more token's share of a step, in units of one decode's share of a
// decode-only step: (t(D, 1) - t(D, 0)) / (t(D, 0) / D). 0 (speculate freely)
// before the fit knows anything.
Scheduler::PositionPrice Scheduler::position_price() const {
  if (!cost_.known()) return {};
  const double base = cost_.predict(decodes_, 0);
  if (base <= 0.0) return {};
  PositionPrice p;
  p.token_s = std::max(0.0, cost_.predict(decodes_, 1) - base);
  p.share_s = base / double(decodes_);
  // With a draft model each drafted position also costs a draft forward,
  // shared by the decodes drafting (the target's fit leaves that time out).
  p.theta = (p.token_s * double(decodes_) + spec_->draft_seconds(decodes_)) / base;
  return p;
}

// Drafts a sequence may verify: under the full policy only, not for an
// embedding or a request that asked for none, none past the tokens it may
// still produce (the last is the token drawn after them) or the context.
int32_t Scheduler::spec_room(const Sequence* seq) const {
  if (!seq->full_kv() || seq->embedding() || !seq->req.speculative) return 0;
  const int32_t left = seq->req.max_tokens - seq->generated() - 1;
  return std::max(0, std::min(left, context_limit_ - int32_t(seq->tokens.size())));
}

void Scheduler::step_timed(double seconds) {
  int32_t tokens = 0;
  for (const ScheduledSeq& s : batch_) tokens += s.n;
  cost_.observe(decodes_, tokens - decodes_, seconds);
}

// Under the step-time target: what the fit leaves after the decodes and their
// drafts (which it prices as prefill tokens), but at least one block, so that
// prompts advance even when decodes fill the target.
int32_t Scheduler::prefill_allowance(int32_t decodes, int32_t drafts) const {
  if (config_.max_step_ms <= 0) return config_.max_batch_tokens;
  const double target = config_.max_step_ms / 1000.0 - draft_seconds_;
  const int32_t fits = cost_.prefill_within(target, decodes, config_.max_batch_tokens);
  return std::max(fits - drafts, blocks_.block_size());
}

int32_t Scheduler::chunk(const Sequence* seq) const {
  return std::min({seq->pending(), seq->kept.max_chunk(), budget_});
}

// Decodes first, then prefill chunks, each in priority order.
void Scheduler::schedule_running(bool decodes) {
  for (size_t i = 0; i < running_.size() && budget_ > 0; ++i) {
    Sequence* seq = running_[i];
    if ((seq->pending() == 1) != decodes) continue;
    const int32_t n = chunk(seq);
    if (!make_room(seq, n)) continue;  // it was the lowest: preempted itself, and last
    batch_.push_back({seq, n});
    budget_ -= n;
  }
}

// Reserves blocks for n more tokens, preempting from the lowest-priority end
// until they fit. The highest-priority sequence always fits eventually: the
// context limit is set so that one sequence fits the whole pool.
bool Scheduler::make_room(Sequence* seq, int32_t n) {
  while (!reserve(seq, n)) {
    Sequence* victim = running_.back();
    preempt(victim);
    if (victim == seq) return false;
  }
  return true;
}

bool Scheduler::reserve(Sequence* seq, int32_t n) {
  if (seq->full_kv()) return blocks_.reserve(seq->table, seq->computed, seq->computed + n);
  if (!blocks_.reserve(seq->table, seq->kept.n_slots(), seq->kept.slots_after(n))) return false;
  seq->kept.place(n);
  return true;
}

void Scheduler::preempt(Sequence* seq) {
  const auto in_batch = std::find_if(batch_.begin(), batch_.end(), [&](const ScheduledSeq& s) { return s.seq == seq; });
  if (in_batch != batch_.end()) {
    budget_ += in_batch->n;
    if (in_batch - batch_.begin() < decodes_) --decodes_;  // a decode, preempted by a later chunk
    batch_.erase(in_batch);
  }
  blocks_.release(seq->table);
  seq->computed = 0;
  seq->spec.input.clear();
  seq->kept.reset();
  running_.erase(std::find(running_.begin(), running_.end(), seq));
  waiting_.push_back(seq);
  ++preemptions_;
  preempted_ = true;
}

// In policy order, until one does not fit: later ones never overtake it
// (that would starve long requests). One whose next prefix block another
// sequence is computing right now waits for it (n choices of one prompt, a
// shared system prompt arriving in a burst): it is computed once.
void Scheduler::admit_waiting(Clock::time_point now) {
  std::sort(waiting_.begin(), waiting_.end(),
            [&](const Sequence* a, const Sequence* b) { return runs_before(*a, *b, config_.policy, now); });
  for (Sequence*& seq : waiting_) {
    if (int32_t(running_.size()) >= config_.max_running || budget_ <= 0) break;
    const Admission a = try_admit(seq);
    if (a == Admission::NoRoom) break;
    if (a == Admission::Admitted) seq = nullptr;
  }
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), nullptr), waiting_.end());
}

bool Scheduler::being_computed(uint64_t block_hash) const {
  for (const Sequence* s : running_)
    if (s->full_kv() && blocks_.next_block_hash(s->table, s->tokens.data(), int32_t(s->tokens.size())) == block_hash)
      return true;
  return false;
}

Scheduler::Admission Scheduler::try_admit(Sequence* seq) {
  const int32_t size = int32_t(seq->tokens.size()), bs = blocks_.block_size();
  int32_t hits = 0, free_hits = 0, computed = 0;
  const bool cached_prefix = seq->full_kv() && !seq->embedding();
  if (cached_prefix) {
    hits = blocks_.match_prefix(seq->tokens.data(), size, &free_hits, seq->table.root);
    if (blocks_.missed_hash() != 0 && being_computed(blocks_.missed_hash())) return Admission::Deferred;
    computed = std::min(hits * bs, size - 1);  // the last token is evaluated for its logits
  }
  const int32_t n = std::min({size - computed, seq->kept.max_chunk(), budget_});
  const int32_t slots = seq->full_kv() ? computed + n : seq->kept.slots_after(n);
  const int32_t cow = computed < hits * bs ? 1 : 0;
  const int32_t need = (slots + bs - 1) / bs - hits + cow;
  // Some headroom for the running sequences' next tokens.
  const int32_t reserve_free = running_.empty() ? 0 : std::max(1, blocks_.total_blocks() / 100);
  if (blocks_.free_blocks() - free_hits - need < reserve_free) return Admission::NoRoom;
  if (cached_prefix) blocks_.take_prefix(seq->table);  // only after this sequence's own match
  seq->computed = computed;
  if (!reserve(seq, n)) {
    blocks_.release(seq->table);
    seq->computed = 0;
    return Admission::NoRoom;
  }
  query_tokens_ += uint64_t(size);
  hit_tokens_ += uint64_t(computed);
  if (!seq->admitted) seq->cached_tokens = computed;
  seq->admitted = true;
  insert_running(seq);
  batch_.push_back({seq, n});
  budget_ -= n;
  return Admission::Admitted;
}

void Scheduler::insert_running(Sequence* seq) {
  running_.insert(std::upper_bound(running_.begin(), running_.end(), seq, outranks), seq);
}

}  // namespace parley
