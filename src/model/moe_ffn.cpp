#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>

#include "kernels/ops.h"
#include "model/expert_router.h"
#include "model/token_rows.h"

namespace parley {

MoeFfn::MoeFfn(const ModelConfig& c, int32_t max_tokens)
    : dim_(c.dim),
      n_experts_(c.moe.n_experts),
      k_(c.moe.n_used),
      ffn_(c.moe.expert_ffn_dim),
      shared_ffn_(c.moe.shared_ffn_dim),
      norm_top_k_(c.moe.norm_top_k) {
  const size_t t = size_t(max_tokens), rows = t * size_t(k_);
  logits_.resize(t * size_t(n_experts_));
  ids_.resize(rows);
  weights_.resize(rows);
  first_.resize(size_t(n_experts_) + 1);
  next_.resize(size_t(n_experts_));
  row_of_.resize(rows);
  xg_.resize(rows * size_t(dim_));
  hg_.resize(rows * size_t(ffn_));
  hu_.resize(rows * size_t(ffn_));
  yg_.resize(rows * size_t(dim_));
  out_.resize(t * size_t(dim_));
  if (shared_ffn_ > 0) {
    sg_.resize(t * size_t(shared_ffn_));
    su_.resize(t * size_t(shared_ffn_));
    ys_.resize(t * size_t(dim_));
  }
}

const float* MoeFfn::forward(const MoeWeights& w, const float* x, int32_t n, ThreadPool& pool) {
  route(w, x, n, pool);
  group(x, n);
  run_experts(w, pool);
  if (w.has_shared()) shared_expert(w, x, n, pool);
  scatter(w, x, n, pool);
  return out_.data();
}

void MoeFfn::route(const MoeWeights& w, const float* x, int32_t n, ThreadPool& pool) {
  matmul(w.router, x, logits_.data(), n, pool);
  for (int32_t t = 0; t < n; ++t)
    route_token(logits_.data() + size_t(t) * size_t(n_experts_), n_experts_, k_, norm_top_k_,
                ids_.data() + size_t(t) * size_t(k_), weights_.data() + size_t(t) * size_t(k_));
}

// A counting sort of the (token, j) pairs by expert, tokens in order within
// an expert; each pair's input row is copied to its place.
void MoeFfn::group(const float* x, int32_t n) {
  const size_t pairs = size_t(n) * size_t(k_);
  std::fill(first_.begin(), first_.end(), 0);
  for (size_t p = 0; p < pairs; ++p) ++first_[size_t(ids_[p]) + 1];
  for (size_t e = 0; e < size_t(n_experts_); ++e) first_[e + 1] += first_[e];
  std::copy(first_.begin(), first_.end() - 1, next_.begin());
  for (size_t p = 0; p < pairs; ++p) {
    const int32_t row = next_[size_t(ids_[p])]++;
    row_of_[p] = row;
    std::copy_n(x + (p / size_t(k_)) * size_t(dim_), dim_, xg_.data() + size_t(row) * size_t(dim_));
  }
}

void MoeFfn::run_experts(const MoeWeights& w, ThreadPool& pool) {
  for (int32_t e = 0; e < n_experts_; ++e) {
    const int32_t first = first_[size_t(e)], rows = first_[size_t(e) + 1] - first;
    if (rows == 0) continue;
    float* g = hg_.data() + size_t(first) * size_t(ffn_);
    float* u = hu_.data() + size_t(first) * size_t(ffn_);
    const MatmulOutput gate_up[] = {{&w.gate[size_t(e)], g}, {&w.up[size_t(e)], u}};
    matmul_shared(gate_up, xg_.data() + size_t(first) * size_t(dim_), rows, pool);
    swiglu_rows(pool, g, u, rows, ffn_);
    matmul(w.down[size_t(e)], g, yg_.data() + size_t(first) * size_t(dim_), rows, pool);
  }
}

void MoeFfn::shared_expert(const MoeWeights& w, const float* x, int32_t n, ThreadPool& pool) {
  const MatmulOutput gate_up[] = {{&w.shared_gate, sg_.data()}, {&w.shared_up, su_.data()}};
  matmul_shared(gate_up, x, n, pool);
  swiglu_rows(pool, sg_.data(), su_.data(), n, shared_ffn_);
  matmul(w.shared_down, sg_.data(), ys_.data(), n, pool);
}

// out[t] = sum_j weight[t][j] * expert output row, in the router's order,
// plus the gated shared expert: the same sums whatever else is in the step.
void MoeFfn::scatter(const MoeWeights& w, const float* x, int32_t n, ThreadPool& pool) {
  const size_t dim = size_t(dim_);
  pool.parallel_for(n, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      float* o = out_.data() + size_t(t) * dim;
      std::fill_n(o, dim, 0.0f);
      for (int32_t j = 0; j < k_; ++j) {
        const size_t p = size_t(t) * size_t(k_) + size_t(j);
        axpy(o, weights_[p], yg_.data() + size_t(row_of_[p]) * dim, dim_);
      }
      if (w.has_shared()) {
        const float gate = 1.0f / (1.0f + std::exp(-dot(w.shared_gate_inp, x + size_t(t) * dim, dim_)));
        axpy(o, gate, ys_.data() + size_t(t) * dim, dim_);
      }
    }
  });
}

}  // namespace parley
