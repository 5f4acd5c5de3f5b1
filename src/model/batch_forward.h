#pragma once
// The transformer forward pass over a batch of sequences that share a paged
// K/V cache. One step evaluates a chunk of tokens from each of several
// sequences (prefill pieces and single decode tokens alike): every weight
// matrix is applied once to all the stacked tokens, each token's K/V rows go
// to its sequence's cache slots, and attention runs as (token, KV head) jobs
// over the thread pool. Buffers are sized at construction, never per step.
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "kernels/attention.h"
#include "kernels/thread_pool.h"
#include "model/kv_cache.h"
#include "model/lora.h"
#include "model/model.h"
#include "model/moe_ffn.h"
#include "model/rope.h"

namespace parley {

struct BatchChunk {
  const int32_t* tokens = nullptr;
  int32_t n = 0;
  int32_t pos = 0;                  // position of tokens[0]
  const int32_t* blocks = nullptr;  // the sequence's block table
  bool logits = false;              // the last token's logits are wanted
  bool all_logits = false;          // every token's logits are wanted (perplexity; implies `logits`)
  // Retention policies: keys are stored without RoPE and slots are attended
  // by position. slot_pos[s] is slot s's position (-1: empty) for s < n_slots,
  // this chunk's slots included; slots[i] is token i's slot. When null, token
  // i goes to slot pos + i and its key is stored rotated.
  const int32_t* slot_pos = nullptr;
  const int32_t* slots = nullptr;
  int32_t n_slots = 0;
  // Optional (with slot_pos): += the attention weight each slot receives,
  // summed over layers, heads and this chunk's tokens (heavy-hitter scores).
  float* attention_sums = nullptr;
  // Embedding requests: dim floats that receive the sequence's pooled final
  // hidden state (after the output norm, as the logits see it). Mean: the sum
  // over its tokens, reset at position 0; Cls: the token at position 0; Last:
  // this chunk's last token (the sequence's last chunk has the last word).
  float* pooled = nullptr;
  Pooling pooling = Pooling::None;
  // The sequence's LoRA adapter (null: the base model) and its scale.
  const LoraAdapter* lora = nullptr;
  float lora_scale = 1.0f;
};

class BatchForward {
 public:
  // At most max_tokens tokens and max_chunks chunks per step; positions below max_context.
  BatchForward(const Model& model, ThreadPool& pool, KvCache& cache, int32_t max_tokens, int32_t max_chunks,
               int32_t max_context);

  // Returns the logits of the chunks that asked for them, in chunk order
  // (one row per token for `all_logits` chunks): rows of vocab_size floats,
  // valid until the next call. Chunks with `pooled` get their hidden states
  // pooled there.
  const float* step(const BatchChunk* chunks, int32_t n_chunks);

  int32_t max_tokens() const { return max_tokens_; }
  int32_t max_chunks() const { return max_chunks_; }
  int32_t max_context() const { return max_context_; }
  // Of a mixture-of-experts model, the experts run so far, summed over blocks
  // and steps (MoeFfn::experts_run); 0 for a dense model.
  uint64_t experts_run() const { return moe_ ? moe_->experts_run() : 0; }

 private:
  struct Job {
    int32_t chunk, token, kv_head;  // token kWholeChunk: every token and head; kTiles: every token, in bf16 tiles
    int32_t n_heads = 1;            // KV heads kv_head.. (one token's)
  };
  int32_t heads_per_job(const BatchChunk* chunks, int32_t n_chunks) const;
  // Whether chunk c attends in bf16 tiles (needs slots that are positions).
  bool tiled(const BatchChunk& c) const;
  void check(const BatchChunk* chunks, int32_t n_chunks);
  void plan(const BatchChunk* chunks, int32_t n_chunks);
  void embed(const BatchChunk* chunks, int32_t n_chunks);
  void layer(int32_t l, const BatchChunk* chunks);
  void store_kv(int32_t l, const BatchChunk* chunks);
  void attention(int32_t l, const BatchChunk* chunks);
  void attend(int32_t l, const BatchChunk& c, int32_t chunk, int32_t t, int32_t kv_head, int32_t n_heads,
              float* weights);
  void attend_chunk(int32_t l, const BatchChunk& c, int32_t chunk, float* weights);
  void attend_tiles(int32_t l, const BatchChunk& c, int32_t chunk, int32_t kv_head);
  void feed_forward(int32_t l, const LayerWeights& lw);
  // The adapters' low-rank terms added to a projection's n output rows (of the
  // tokens, or of the logits rows), when any chunk of the step has an adapter.
  void lora(int32_t l, std::initializer_list<LoraOutput> outs, const float* x, int32_t n, const LoraUse* rows) {
    if (any_lora_) lora_.apply(pool_, l, {outs.begin(), outs.size()}, x, n, rows);
  }
  void pool(const BatchChunk* chunks, int32_t n_chunks);
  const float* logits(const BatchChunk* chunks, int32_t n_chunks);
  int32_t slot_of(const BatchChunk& c, int32_t i) const { return c.slots ? c.slots[i] : c.pos + i; }

  const Model& model_;
  const ModelConfig& c_;
  ThreadPool& pool_;
  KvCache& cache_;
  int32_t max_tokens_, max_chunks_, max_context_;
  Rope rope_;        // prepared once for every position
  Rope rope_local_;  // windowed layers' own rope (Gemma 3), else unused
  const Rope& rope_of(int32_t l) const {
    return c_.rope_base_swa > 0.0f && c_.window_of(l) > 0 ? rope_local_ : rope_;
  }
  int32_t n_ = 0;  // tokens in the current step
  std::vector<int32_t> tok_chunk_, tok_index_, chunk_first_;
  std::vector<KeyRotation> rotations_;  // [chunk][global, local]
  std::vector<Job> jobs_;
  std::atomic<int32_t> next_job_{0};
  std::vector<float> x_, xb_, q_, k_, v_, att_, gate_, up_, logits_;
  std::vector<float> weights_;  // [thread][group x max_context]: heavy-hitter scratch
  std::optional<MoeFfn> moe_;   // the FFN of mixture-of-experts models
  bool any_lora_ = false;
  std::vector<LoraUse> tok_lora_, row_lora_;  // each token's / logits row's adapter
  LoraStep lora_;
};

}  // namespace parley
