#pragma once
// One request inside the engine: its tokens (prompt, then generated), where
// its K/V live, and its sampling and text-output state.
#include <chrono>
#include <optional>
#include <cstdint>
#include <vector>

#include "engine/block_manager.h"
#include "engine/kv_retention.h"
#include "engine/request.h"
#include "engine/sampler.h"
#include "engine/speculation.h"
#include "engine/stop.h"
#include "engine/token_constraint.h"
#include "tokenizer/tokenizer.h"

namespace parley {

using Clock = std::chrono::steady_clock;

struct Sequence {
  // Throws parley::Error for invalid sampling parameters. `max_new`: the
  // most tokens it can generate (token storage is reserved for them).
  Sequence(RequestId id, Request request, EventSink sink, uint64_t arrival, const Tokenizer& tok,
           int32_t vocab_size, const KvRetention& retention, int32_t max_new);
  ~Sequence();  // where SpecState's DraftState is complete

  RequestId id;
  Request req;
  EventSink sink;
  uint64_t arrival;  // submission order
  Clock::time_point submitted;
  std::vector<int32_t> tokens;  // prompt, then generated tokens
  int32_t prompt_len;
  // Tokens from the start whose K/V have been computed (or, under a
  // retention policy, seen: some were evicted since).
  int32_t computed = 0;
  BlockTable table;
  RetainedKv kept;  // slot bookkeeping under a retention policy
  int32_t cached_tokens = 0;  // prompt tokens found in the prefix cache at first admission
  bool admitted = false;      // ever admitted (usage counts the first admission)
  Clock::time_point first_step{};  // when a step first ran it (epoch: not yet)
  Sampler sampler;
  StreamingDetokenizer detok;
  StopStringMatcher stops;
  std::vector<float> pooled;  // embedding requests: BatchChunk::pooled
  std::optional<TokenConstraint> constraint;  // requests with a grammar
  SpecState spec;

  // The next token from these logits (which it may modify).
  int32_t draw(float* logits) { return constraint ? constraint->sample(sampler, logits) : sampler.sample(logits); }

  int32_t pending() const { return int32_t(tokens.size()) - computed; }  // to evaluate
  int32_t generated() const { return int32_t(tokens.size()) - prompt_len; }
  bool full_kv() const { return kept.policy() == KvPolicy::Full; }
  bool embedding() const { return req.pooling != Pooling::None; }
};

}  // namespace parley
