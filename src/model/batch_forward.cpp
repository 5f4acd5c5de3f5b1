#include "model/batch_forward.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/ops.h"
#include "kernels/quant.h"
#include "kernels/tanh_ops.h"
#include "model/attention_query.h"
#include "model/rope_scaling.h"
#include "model/token_rows.h"
#include "util/error.h"

namespace parley {
namespace {

constexpr int32_t kWholeChunk = -1, kTiles = -2;  // Job::token markers

// KeyRotation's callback: RoPE at `pos`, for one head's key.
void rotate_key(const void* rope, float* key, int32_t pos) { static_cast<const Rope*>(rope)->apply(key, 1, pos); }

// Per-frequency rope divisors: Llama 3's, or LongRoPE's for the context in use.
const float* rope_factors(const Weights& w, const ModelConfig& c, int32_t context) {
  const float* longrope = longrope_factors(c, w.rope_long, w.rope_short, context);
  return longrope ? longrope : w.rope_freqs;
}

// The rope of windowed layers with their own base (Gemma 3): unscaled.
ModelConfig local_rope_config(ModelConfig c) {
  if (c.rope_base_swa > 0.0f) c.rope_base = c.rope_base_swa;
  c.rope_scale = 1.0f;
  c.yarn_factor = 0.0f;
  c.rope_attn_factor = 1.0f;
  return c;
}

}  // namespace

BatchForward::BatchForward(const Model& model, ThreadPool& pool, KvCache& cache, int32_t max_tokens,
                           int32_t max_chunks, int32_t max_context)
    : model_(model),
      c_(model.config()),
      pool_(pool),
      cache_(cache),
      max_tokens_(max_tokens),
      max_chunks_(max_chunks),
      max_context_(max_context),
      rope_(c_, rope_factors(model.weights(), c_, max_context)),
      rope_local_(local_rope_config(c_), nullptr) {
  if (max_tokens < 1 || max_chunks < 1 || max_context < 1)
    throw Error("BatchForward: token, chunk and context limits must be positive");
  if (c_.head_dim > kMaxAttentionHeadDim || c_.n_heads / c_.n_kv_heads > kMaxAttentionGroup)
    throw Error("BatchForward: attention shape not supported (head_dim " + std::to_string(c_.head_dim) + ")");
  rope_.prepare(0, max_context);
  if (c_.rope_base_swa > 0.0f) rope_local_.prepare(0, max_context);
  const size_t t = size_t(max_tokens);
  tok_chunk_.resize(t);
  tok_index_.resize(t);
  tok_lora_.resize(t);
  row_lora_.reserve(size_t(max_chunks));
  chunk_first_.resize(size_t(max_chunks));
  rotations_.resize(2 * size_t(max_chunks));
  jobs_.reserve(t * size_t(c_.n_kv_heads) + size_t(max_chunks));
  x_.resize(t * size_t(c_.dim));
  xb_.resize(t * size_t(std::max(c_.dim, c_.q_dim())));
  q_.resize(t * size_t(c_.q_dim()));
  k_.resize(t * size_t(c_.kv_dim()));
  v_.resize(t * size_t(c_.kv_dim()));
  att_.resize(t * size_t(c_.q_dim()));
  if (c_.moe.enabled()) {
    moe_.emplace(c_, max_tokens);
  } else {
    gate_.resize(t * size_t(c_.ffn_dim));
    up_.resize(t * size_t(c_.ffn_dim));
  }
  logits_.resize(size_t(max_chunks) * size_t(c_.vocab_size));
  weights_.resize(size_t(pool.size()) * size_t(c_.n_heads / c_.n_kv_heads) * size_t(max_context));
}

void BatchForward::check(const BatchChunk* chunks, int32_t n_chunks) {
  if (n_chunks < 1 || n_chunks > max_chunks_)
    throw Error("BatchForward: " + std::to_string(n_chunks) + " chunks, limit " + std::to_string(max_chunks_));
  int64_t total = 0;
  for (int32_t i = 0; i < n_chunks; ++i) {
    const BatchChunk& c = chunks[i];
    if (c.n < 1 || c.pos < 0 || c.pos + c.n > max_context_)
      throw Error("BatchForward: chunk of " + std::to_string(c.n) + " tokens at position " + std::to_string(c.pos) +
                  " exceeds the context of " + std::to_string(max_context_));
    if (c.slot_pos && (c.n_slots < 1 || c.n_slots > max_context_))
      throw Error("BatchForward: " + std::to_string(c.n_slots) + " slots do not fit the context");
    for (int32_t j = 0; j < c.n; ++j)
      if (c.tokens[j] < 0 || c.tokens[j] >= c_.vocab_size)
        throw Error("token id " + std::to_string(c.tokens[j]) + " out of range [0, " +
                    std::to_string(c_.vocab_size) + ")");
    total += c.n;
  }
  if (total > max_tokens_)
    throw Error("BatchForward: " + std::to_string(total) + " tokens, limit " + std::to_string(max_tokens_));
}

bool BatchForward::tiled(const BatchChunk& c) const { return !c.slot_pos && tile_attention(model_, c.n); }

// A token's KV heads lie side by side in each block (kv_cache.h), and one
// job attends several of them a tile at a time (AttentionQuery::kv_heads), so
// it reads each block's memory in order rather than one head's 2 KiB at a
// time: with 16 decoding sequences of llama-110m, whole tokens per job served
// more tokens per second (docs/performance.md). Heads are split only as far
// as needed to give every thread a few jobs (one token at batch 1).
int32_t BatchForward::heads_per_job(const BatchChunk* chunks, int32_t n_chunks) const {
  constexpr int32_t kJobsPerThread = 4;
  int64_t tokens = 0;  // those attended token by token
  for (int32_t ci = 0; ci < n_chunks; ++ci)
    if (!chunks[ci].attention_sums && !tiled(chunks[ci])) tokens += chunks[ci].n;
  const int64_t per_job = tokens * c_.n_kv_heads / (int64_t(kJobsPerThread) * pool_.size());
  const int32_t most = std::min(c_.n_kv_heads, kMaxAttentionGroup / (c_.n_heads / c_.n_kv_heads));
  return int32_t(std::clamp<int64_t>(per_job, 1, most));
}

// Which chunk each stacked token belongs to, and the attention jobs.
void BatchForward::plan(const BatchChunk* chunks, int32_t n_chunks) {
  n_ = 0;
  jobs_.clear();
  any_lora_ = false;
  const int32_t heads = heads_per_job(chunks, n_chunks);
  for (int32_t ci = 0; ci < n_chunks; ++ci) {
    const BatchChunk& c = chunks[ci];
    chunk_first_[size_t(ci)] = n_;
    for (int32_t i = 0; i < c.n; ++i, ++n_) {
      tok_chunk_[size_t(n_)] = ci;
      tok_index_[size_t(n_)] = i;
      tok_lora_[size_t(n_)] = LoraUse{c.lora, c.lora_scale};
    }
    any_lora_ = any_lora_ || c.lora;
    rotations_[2 * size_t(ci)] = KeyRotation{c.slot_pos, &rotate_key, &rope_};
    rotations_[2 * size_t(ci) + 1] = KeyRotation{c.slot_pos, &rotate_key, &rope_local_};
    // Heavy-hitter sums are accumulated by one job per chunk: no races.
    if (c.attention_sums) {
      jobs_.push_back({ci, kWholeChunk, -1});
      continue;
    }
    if (tiled(c)) {
      for (int32_t h = 0; h < c_.n_kv_heads; ++h) jobs_.push_back({ci, kTiles, h});
      continue;
    }
    for (int32_t i = 0; i < c.n; ++i)
      for (int32_t h = 0; h < c_.n_kv_heads; h += heads)
        jobs_.push_back({ci, i, h, std::min(heads, c_.n_kv_heads - h)});
  }
}

const float* BatchForward::step(const BatchChunk* chunks, int32_t n_chunks) {
  check(chunks, n_chunks);
  plan(chunks, n_chunks);
  embed(chunks, n_chunks);
  for (int32_t l = 0; l < c_.n_layers; ++l) layer(l, chunks);
  pool(chunks, n_chunks);
  return logits(chunks, n_chunks);
}

void BatchForward::embed(const BatchChunk* chunks, int32_t n_chunks) {
  const MatrixView& e = model_.weights().token_embd;
  const uint64_t bytes = row_bytes(e.type, uint64_t(c_.dim));
  float* x = x_.data();
  for (int32_t ci = 0; ci < n_chunks; ++ci)
    for (int32_t i = 0; i < chunks[ci].n; ++i, x += c_.dim) {
      dequantize_row(e.type, static_cast<const uint8_t*>(e.data) + size_t(chunks[ci].tokens[i]) * bytes, x, c_.dim);
      if (c_.embd_scale != 1.0f) std::for_each(x, x + c_.dim, [&](float& v) { v *= c_.embd_scale; });
    }
}

void BatchForward::layer(int32_t l, const BatchChunk* chunks) {
  const LayerWeights& lw = model_.weights().layers[size_t(l)];
  rmsnorm_rows(pool_, xb_.data(), x_.data(), lw.attn_norm, n_, c_.dim, c_.norm_eps);
  const MatmulOutput qkv[] = {{&lw.wq, q_.data()}, {&lw.wk, k_.data()}, {&lw.wv, v_.data()}};
  matmul_shared(qkv, xb_.data(), n_, pool_);
  lora(l, {{LoraTarget::Q, q_.data()}, {LoraTarget::K, k_.data()}, {LoraTarget::V, v_.data()}}, xb_.data(), n_,
       tok_lora_.data());
  add_bias_rows(pool_, q_.data(), lw.bq, n_, c_.q_dim());
  add_bias_rows(pool_, k_.data(), lw.bk, n_, c_.kv_dim());
  add_bias_rows(pool_, v_.data(), lw.bv, n_, c_.kv_dim());
  store_kv(l, chunks);
  attention(l, chunks);
  matmul(lw.wo, att_.data(), xb_.data(), n_, pool_);
  lora(l, {{LoraTarget::O, xb_.data()}}, att_.data(), n_, tok_lora_.data());
  if (lw.post_attn_norm) rmsnorm_rows(pool_, xb_.data(), xb_.data(), lw.post_attn_norm, n_, c_.dim, c_.norm_eps);
  add_rows(pool_, x_.data(), xb_.data(), n_, c_.dim);
  feed_forward(l, lw);
}

// Q/K norms and RoPE (keys only where they are stored rotated), then each
// token's K and V rows into its sequence's cache slot.
void BatchForward::store_kv(int32_t l, const BatchChunk* chunks) {
  const LayerWeights& lw = model_.weights().layers[size_t(l)];
  const int32_t hd = c_.head_dim, kvd = c_.kv_dim();
  pool_.parallel_for(n_, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const BatchChunk& c = chunks[tok_chunk_[size_t(t)]];
      const int32_t i = tok_index_[size_t(t)];
      float* q = q_.data() + size_t(t) * size_t(c_.q_dim());
      float* k = k_.data() + size_t(t) * size_t(kvd);
      if (lw.q_norm) {  // per head, or once over the whole row
        const int32_t qw = c_.qk_norm_whole ? c_.q_dim() : hd, kw = c_.qk_norm_whole ? kvd : hd;
        for (int32_t o = 0; o < c_.q_dim(); o += qw) rmsnorm(q + o, q + o, lw.q_norm, qw, c_.norm_eps);
        for (int32_t o = 0; o < kvd; o += kw) rmsnorm(k + o, k + o, lw.k_norm, kw, c_.norm_eps);
      }
      const Rope& rope = rope_of(l);
      rope.apply(q, c_.n_heads, c.pos + i);
      if (!c.slot_pos) rope.apply(k, c_.n_kv_heads, c.pos + i);
      const int32_t slot = slot_of(c, i);
      const int32_t block = c.blocks[slot / cache_.block_size()], in_block = slot % cache_.block_size();
      const float* v = v_.data() + size_t(t) * size_t(kvd);
      for (int32_t h = 0; h < c_.n_kv_heads; ++h) {
        kv_row_from_float(cache_.type(), k + h * hd, cache_.k_row(block, l, in_block, h), hd);
        kv_row_from_float(cache_.type(), v + h * hd, cache_.v_row(block, l, in_block, h), hd);
      }
    }
  });
}

void BatchForward::attention(int32_t l, const BatchChunk* chunks) {
  const size_t scratch = weights_.size() / size_t(pool_.size());
  next_job_.store(0, std::memory_order_relaxed);
  // Jobs differ in length (contexts differ): threads take the next one free.
  pool_.run([&](int thread, int) {
    float* weights = weights_.data() + size_t(thread) * scratch;
    for (;;) {
      const int32_t j = next_job_.fetch_add(1, std::memory_order_relaxed);
      if (j >= int32_t(jobs_.size())) return;
      const Job& job = jobs_[size_t(j)];
      const BatchChunk& c = chunks[job.chunk];
      if (job.token == kWholeChunk) attend_chunk(l, c, job.chunk, weights);
      else if (job.token == kTiles) attend_tiles(l, c, job.chunk, job.kv_head);
      else attend(l, c, job.chunk, job.token, job.kv_head, job.n_heads, nullptr);
    }
  });
}

// Token `i` of chunk `ci` over its sequence's cache, for the query heads of
// KV heads kv_head.. (n of them): causal, and within the model's sliding
// window if it has one.
void BatchForward::attend(int32_t l, const BatchChunk& c, int32_t ci, int32_t i, int32_t kv_head, int32_t n,
                          float* weights) {
  const size_t t = size_t(chunk_first_[size_t(ci)] + i);
  const PagedKv kv = cache_.layer(l, c.blocks);
  AttentionQuery a = causal_query(c_, l, q_.data(), att_.data(), t, kv_head, c.pos + i);
  a.kv_heads = n;
  a.weights = weights;
  if (c.slot_pos) {  // slots by position: the causal range becomes a position range
    a.rotation = &rotations_[2 * size_t(ci) + (&rope_of(l) == &rope_local_ ? 1 : 0)];
    a.min_pos = a.first;
    a.max_pos = a.end - 1;
    a.first = 0;
    a.end = c.n_slots;
  }
  paged_attention(kv, a);
}

// Every token of chunk `ci` for the query heads of one KV head, in bf16 tiles.
void BatchForward::attend_tiles(int32_t l, const BatchChunk& c, int32_t ci, int32_t kv_head) {
  const size_t t = size_t(chunk_first_[size_t(ci)]);
  prefill_attention(cache_.layer(l, c.blocks), prefill_query(c_, l, q_.data(), att_.data(), t, c.n, kv_head, c.pos));
}

// Every token and head of a chunk, adding the attention weights each slot
// receives to the chunk's sums.
void BatchForward::attend_chunk(int32_t l, const BatchChunk& c, int32_t ci, float* weights) {
  const int32_t group = c_.n_heads / c_.n_kv_heads;
  for (int32_t i = 0; i < c.n; ++i)
    for (int32_t h = 0; h < c_.n_kv_heads; ++h) {
      attend(l, c, ci, i, h, 1, weights);
      for (int32_t g = 0; g < group; ++g) add(c.attention_sums, weights + size_t(g) * size_t(c.n_slots), c.n_slots);
    }
}

void BatchForward::feed_forward(int32_t l, const LayerWeights& lw) {
  rmsnorm_rows(pool_, xb_.data(), x_.data(), lw.ffn_norm, n_, c_.dim, c_.norm_eps);
  if (moe_) {
    add_rows(pool_, x_.data(), moe_->forward(lw.moe, xb_.data(), n_, pool_), n_, c_.dim);
    return;
  }
  const MatmulOutput gate_up[] = {{&lw.w_gate, gate_.data()}, {&lw.w_up, up_.data()}};
  matmul_shared(gate_up, xb_.data(), n_, pool_);
  lora(l, {{LoraTarget::Gate, gate_.data()}, {LoraTarget::Up, up_.data()}}, xb_.data(), n_, tok_lora_.data());
  if (c_.ffn_act == FfnActivation::GeluTanh) geglu_rows(pool_, gate_.data(), up_.data(), n_, c_.ffn_dim);
  else swiglu_rows(pool_, gate_.data(), up_.data(), n_, c_.ffn_dim);
  matmul(lw.w_down, gate_.data(), xb_.data(), n_, pool_);
  lora(l, {{LoraTarget::Down, xb_.data()}}, gate_.data(), n_, tok_lora_.data());
  if (lw.post_ffn_norm) rmsnorm_rows(pool_, xb_.data(), xb_.data(), lw.post_ffn_norm, n_, c_.dim, c_.norm_eps);
  add_rows(pool_, x_.data(), xb_.data(), n_, c_.dim);
}

void BatchForward::pool(const BatchChunk* chunks, int32_t n_chunks) {
  const size_t dim = size_t(c_.dim);
  float* h = xb_.data();  // scratch until logits() fills it
  for (int32_t ci = 0; ci < n_chunks; ++ci) {
    const BatchChunk& c = chunks[ci];
    if (!c.pooled) continue;
    if (c.pooling == Pooling::Mean && c.pos == 0) std::fill_n(c.pooled, dim, 0.0f);
    for (int32_t i = 0; i < c.n; ++i) {
      const bool taken = c.pooling == Pooling::Mean || (c.pooling == Pooling::Last && i == c.n - 1) ||
                         (c.pooling == Pooling::Cls && c.pos + i == 0);
      if (!taken) continue;
      const size_t t = size_t(chunk_first_[size_t(ci)] + i);
      rmsnorm(h, x_.data() + t * dim, model_.weights().output_norm, c_.dim, c_.norm_eps);
      if (c.pooling == Pooling::Mean) add(c.pooled, h, c_.dim);
      else std::copy_n(h, dim, c.pooled);
    }
  }
}

// The output projection only for the tokens whose logits were asked for:
// the last of a `logits` chunk, every one of an `all_logits` chunk. Only
// all_logits grows the output buffer beyond a row per chunk.
const float* BatchForward::logits(const BatchChunk* chunks, int32_t n_chunks) {
  const size_t dim = size_t(c_.dim);
  int32_t rows = 0;
  row_lora_.clear();
  for (int32_t ci = 0; ci < n_chunks; ++ci) {
    const BatchChunk& c = chunks[ci];
    if (!c.logits && !c.all_logits) continue;
    const int32_t first = chunk_first_[size_t(ci)], end = first + c.n;
    for (int32_t t = c.all_logits ? first : end - 1; t < end; ++t) {
      rmsnorm(xb_.data() + size_t(rows++) * dim, x_.data() + size_t(t) * dim, model_.weights().output_norm, c_.dim,
              c_.norm_eps);
      row_lora_.push_back(tok_lora_[size_t(t)]);
    }
  }
  if (size_t(rows) * size_t(c_.vocab_size) > logits_.size()) logits_.resize(size_t(rows) * size_t(c_.vocab_size));
  if (rows > 0) matmul(model_.weights().output, xb_.data(), logits_.data(), rows, pool_);
  lora(-1, {{LoraTarget::Output, logits_.data()}}, xb_.data(), rows, row_lora_.data());
  if (c_.final_softcap > 0.0f) softcap(logits_.data(), int64_t(rows) * c_.vocab_size, c_.final_softcap);
  return logits_.data();
}

}  // namespace parley
