#pragma once
// Slot bookkeeping of one sequence under a KV retention policy
// (docs/kv-policies.md). The sequence owns a bounded set of cache slots:
// Window keeps the last W tokens, Sink the first S and the last W
// (StreamingLLM), HeavyHitter S sinks, the H tokens that received the most
// attention so far and the last W (H2O). A kept token's position is its rank
// among the kept ones, so positions stay below the budget however long the
// generation: keys are stored without RoPE and rotated when read.
#include <cstdint>
#include <vector>

#include "engine/request.h"

namespace parley {

class RetainedKv {
 public:
  explicit RetainedKv(const KvRetention& r);

  KvPolicy policy() const { return r_.policy; }
  int32_t capacity() const { return capacity_; }   // slots at most
  int32_t max_chunk() const;                       // new tokens per step at most
  int32_t live() const { return live_; }           // tokens kept
  int32_t n_slots() const { return n_slots_; }     // slots ever used (a prefix of the table)
  // Slots in use once n more tokens are placed (for reserving blocks first).
  int32_t slots_after(int32_t n) const;
  // Evicts as the policy says to make room, then gives n new tokens slots
  // (slots()) with positions live() .. live() + n - 1.
  void place(int32_t n);
  const int32_t* slots() const { return slots_.data(); }
  const int32_t* slot_pos() const { return pos_.data(); }  // -1: empty slot
  float* attention_sums() { return r_.policy == KvPolicy::HeavyHitter ? sums_.data() : nullptr; }
  void reset();  // forget everything (preemption)

 private:
  int32_t victim() const;  // slot to evict next
  void evict(int32_t slot);

  KvRetention r_;
  int32_t capacity_;
  int32_t live_ = 0, n_slots_ = 0;
  std::vector<int32_t> pos_, slots_;
  std::vector<float> sums_;  // HeavyHitter: attention received per slot
};

// Checks a retention request's sizes against the context limit; throws parley::Error.
void validate_retention(const KvRetention& r, int32_t context_limit);

}  // namespace parley
