#include "model/forward.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/attention.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "model/attention_query.h"
#include "model/token_rows.h"
#include "util/error.h"

namespace parley {
namespace {

// Tokens per matmul during prefill: the tile kernels gain up to 512 (their
// weights are dequantized once per call), as does the engine's default step.
constexpr int32_t kPrefillChunk = 512;

}  // namespace

Forward::Forward(const Model& model, ThreadPool& pool, int32_t max_context)
    : model_(model),
      c_(model.config()),
      pool_(pool),
      rope_(c_, model.weights().rope_freqs),
      max_context_(max_context > 0 ? max_context : c_.context_length),
      chunk_(std::min(kPrefillChunk, max_context_)) {
  const size_t ch = size_t(chunk_);
  kv_.assign(size_t(c_.n_layers) * 2 * size_t(max_context_) * size_t(c_.kv_dim()), 0.0f);
  x_.resize(ch * size_t(c_.dim));
  xb_.resize(ch * size_t(std::max(c_.dim, c_.q_dim())));
  q_.resize(ch * size_t(c_.q_dim()));
  k_.resize(ch * size_t(c_.kv_dim()));
  v_.resize(ch * size_t(c_.kv_dim()));
  att_.resize(ch * size_t(c_.q_dim()));
  gate_.resize(ch * size_t(c_.ffn_dim));
  up_.resize(ch * size_t(c_.ffn_dim));
  last_logits_.resize(size_t(c_.vocab_size));
}

// [layer][K | V][KV head][position][head_dim]: each head's rows are contiguous.
float* Forward::kv_row(int32_t layer, int32_t kind, int32_t head, int32_t pos) {
  const size_t heads = size_t(c_.n_kv_heads);
  return kv_.data() +
         (((size_t(layer) * 2 + size_t(kind)) * heads + size_t(head)) * size_t(max_context_) + size_t(pos)) *
             size_t(c_.head_dim);
}

void Forward::truncate(int32_t pos) {
  if (pos < 0 || pos > pos_) throw Error("Forward::truncate: position " + std::to_string(pos) + " out of range");
  pos_ = pos;
}

const float* Forward::eval(const int32_t* tokens, int32_t n, float* all_logits) {
  if (n <= 0) throw Error("eval: no tokens");
  if (pos_ + n > max_context_)
    throw Error("context length exceeded: " + std::to_string(pos_ + n) + " positions, limit " +
                std::to_string(max_context_));
  for (int32_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= c_.vocab_size)
      throw Error("token id " + std::to_string(tokens[i]) + " out of range [0, " + std::to_string(c_.vocab_size) + ")");
  for (int32_t done = 0; done < n; done += chunk_) {
    const int32_t m = std::min(chunk_, n - done);
    eval_chunk(tokens + done, m, all_logits ? all_logits + size_t(done) * size_t(c_.vocab_size) : nullptr);
  }
  return last_logits_.data();
}

void Forward::eval_chunk(const int32_t* tokens, int32_t n, float* all_logits) {
  const Weights& w = model_.weights();
  const int32_t dim = c_.dim;
  for (int32_t t = 0; t < n; ++t) {
    const auto& e = w.token_embd;
    const auto* row = static_cast<const uint8_t*>(e.data) + size_t(tokens[t]) * row_bytes(e.type, uint64_t(dim));
    dequantize_row(e.type, row, x_.data() + size_t(t) * size_t(dim), dim);
  }
  rope_.prepare(pos_, n);
  for (int32_t l = 0; l < c_.n_layers; ++l) {
    const LayerWeights& lw = w.layers[size_t(l)];
    rmsnorm_rows(pool_, xb_.data(), x_.data(), lw.attn_norm, n, dim, c_.norm_eps);
    const MatmulOutput qkv[] = {{&lw.wq, q_.data()}, {&lw.wk, k_.data()}, {&lw.wv, v_.data()}};
    matmul_shared(qkv, xb_.data(), n, pool_);
    add_bias_rows(pool_, q_.data(), lw.bq, n, c_.q_dim());
    add_bias_rows(pool_, k_.data(), lw.bk, n, c_.kv_dim());
    add_bias_rows(pool_, v_.data(), lw.bv, n, c_.kv_dim());
    attention(l, n);
    matmul(lw.wo, att_.data(), xb_.data(), n, pool_);
    add_rows(pool_, x_.data(), xb_.data(), n, dim);
    feed_forward(lw, n);
  }
  pos_ += n;
  if (all_logits) {
    logits(x_.data(), n, all_logits);
    std::copy_n(all_logits + size_t(n - 1) * size_t(c_.vocab_size), c_.vocab_size, last_logits_.data());
  } else {
    logits(x_.data() + size_t(n - 1) * size_t(dim), 1, last_logits_.data());
  }
}

// Q/K norms and RoPE, K/V into the cache, then causal attention of each of
// the n new tokens over every cached position (within the sliding window).
void Forward::attention(int32_t layer, int32_t n) {
  const LayerWeights& lw = model_.weights().layers[size_t(layer)];
  const int32_t hd = c_.head_dim, qd = c_.q_dim(), kvd = c_.kv_dim();
  for (int32_t t = 0; t < n; ++t) {
    float* q = q_.data() + size_t(t) * size_t(qd);
    float* k = k_.data() + size_t(t) * size_t(kvd);
    if (lw.q_norm) {
      for (int32_t h = 0; h < c_.n_heads; ++h) rmsnorm(q + h * hd, q + h * hd, lw.q_norm, hd, c_.norm_eps);
      for (int32_t h = 0; h < c_.n_kv_heads; ++h) rmsnorm(k + h * hd, k + h * hd, lw.k_norm, hd, c_.norm_eps);
    }
    rope_.apply(q, c_.n_heads, t);
    rope_.apply(k, c_.n_kv_heads, t);
    const float* v = v_.data() + size_t(t) * size_t(kvd);
    for (int32_t h = 0; h < c_.n_kv_heads; ++h) {
      std::copy_n(k + h * hd, hd, kv_row(layer, 0, h, pos_ + t));
      std::copy_n(v + h * hd, hd, kv_row(layer, 1, h, pos_ + t));
    }
  }
  // The cache seen as one block of max_context slots, for the fused kernel.
  const int32_t only_block = 0;
  PagedKv kv;
  kv.type = DType::F32;
  kv.k = reinterpret_cast<const uint8_t*>(kv_row(layer, 0, 0, 0));
  kv.v = reinterpret_cast<const uint8_t*>(kv_row(layer, 1, 0, 0));
  kv.slot_stride = size_t(hd) * sizeof(float);
  kv.head_stride = size_t(max_context_) * size_t(hd) * sizeof(float);
  kv.block_size = max_context_;
  kv.blocks = &only_block;
  if (tile_attention(model_, n)) {
    pool_.run([&](int thread, int n_threads) {  // one KV head's tokens at a time
      for (int32_t h = thread; h < c_.n_kv_heads; h += n_threads)
        prefill_attention(kv, prefill_query(c_, q_.data(), att_.data(), 0, n, h, pos_));
    });
    return;
  }
  // Jobs are (token, KV head); later tokens attend to more, so threads take them in turn.
  pool_.run([&](int thread, int n_threads) {
    for (int32_t job = thread; job < n * c_.n_kv_heads; job += n_threads) {
      const int32_t t = job / c_.n_kv_heads, kvh = job % c_.n_kv_heads;
      const AttentionQuery a = causal_query(c_, q_.data(), att_.data(), size_t(t), kvh, pos_ + t);
      paged_attention(kv, a);
    }
  });
}

void Forward::feed_forward(const LayerWeights& lw, int32_t n) {
  const int32_t dim = c_.dim, ffn = c_.ffn_dim;
  rmsnorm_rows(pool_, xb_.data(), x_.data(), lw.ffn_norm, n, dim, c_.norm_eps);
  const MatmulOutput gate_up[] = {{&lw.w_gate, gate_.data()}, {&lw.w_up, up_.data()}};
  matmul_shared(gate_up, xb_.data(), n, pool_);
  swiglu_rows(pool_, gate_.data(), up_.data(), n, ffn);
  matmul(lw.w_down, gate_.data(), xb_.data(), n, pool_);
  add_rows(pool_, x_.data(), xb_.data(), n, dim);
}

void Forward::logits(const float* x, int32_t n, float* out) {
  const int32_t dim = c_.dim;
  rmsnorm_rows(pool_, xb_.data(), x, model_.weights().output_norm, n, dim, c_.norm_eps);
  matmul(model_.weights().output, xb_.data(), out, n, pool_);
}

}  // namespace parley
