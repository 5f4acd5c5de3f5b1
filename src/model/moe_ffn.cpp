#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>

#include "kernels/ops.h"
#include "kernels/packed_gemm.h"
#include "kernels/quant.h"
#include "model/expert_router.h"
#include "model/token_rows.h"

namespace parley {
namespace {

constexpr int32_t kMinParallelTokens = 16;

// Rows [r0, r1) of w, r0 a multiple of kPackRows: their bytes in the file's
// layout and, when w has a packed copy, their row groups in it (groups of
// kPackRows rows of one size, the packed size of a kPackRows-row matrix:
// kernels/packed_gemm.h).
MatrixView row_slice(const MatrixView& w, int32_t r0, int32_t r1) {
  MatrixView s = w;
  s.rows = r1 - r0;
  s.data = static_cast<const uint8_t*>(w.data) + uint64_t(r0) * row_bytes(w.type, uint64_t(w.cols));
  if (w.packed)
    s.packed = static_cast<const uint8_t*>(w.packed) +
               uint64_t(r0 / kPackRows) * packed_bytes(MatrixView{w.type, kPackRows, w.cols, nullptr, nullptr});
  return s;
}

// The products of a job run on the thread that took it.
ThreadPool& serial_pool() {
  thread_local ThreadPool pool(1);
  return pool;
}

// Grow-only per thread: a job's slice of outputs before they go to their rows.
std::vector<float>& slice_scratch(size_t n) {
  thread_local std::vector<float> v;
  if (v.size() < n) v.resize(n);
  return v;
}

}  // namespace

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
  const size_t slices = (size_t(ffn_) + kSliceRows - 1) / kSliceRows, down = (size_t(dim_) + kSliceRows - 1) / kSliceRows;
  up_jobs_.reserve(size_t(n_experts_) * slices);
  down_jobs_.reserve(size_t(n_experts_) * down);
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

// Expert e's rows of one product: the slices are the parallel jobs, so a
// step's chosen experts run in two pool dispatches (gate/up with SwiGLU, then
// down) rather than three per expert. A slice is as large as still leaves
// every thread kJobsPerThread jobs: each job quantizes its rows' inputs and
// dispatches its product, which costs about as much as reading a few rows.
void MoeFfn::plan_slices(int32_t threads) {
  int32_t active = 0;
  for (int32_t e = 0; e < n_experts_; ++e) active += first_[size_t(e)] != first_[size_t(e) + 1];
  experts_run_ += uint64_t(active);
  const auto slice_rows = [&](int32_t rows) {
    const int32_t per_expert = std::max(1, kJobsPerThread * threads / std::max(1, active));
    const int32_t want = (rows + per_expert - 1) / per_expert;
    return std::min(rows, (want + kSliceRows - 1) / kSliceRows * kSliceRows);
  };
  const int32_t up_rows = slice_rows(ffn_), down_rows = slice_rows(dim_);
  up_jobs_.clear();
  down_jobs_.clear();
  for (int32_t e = 0; e < n_experts_; ++e) {
    if (first_[size_t(e)] == first_[size_t(e) + 1]) continue;
    for (int32_t r = 0; r < ffn_; r += up_rows) up_jobs_.push_back({e, r, std::min(ffn_, r + up_rows)});
    for (int32_t r = 0; r < dim_; r += down_rows) down_jobs_.push_back({e, r, std::min(dim_, r + down_rows)});
  }
}

// Each job multiplies its expert's gathered rows by one slice of the weights
// on its own thread, then writes the slice's columns of the rows' outputs.
void MoeFfn::run_experts(const MoeWeights& w, ThreadPool& pool) {
  plan_slices(pool.size());
  pool.parallel_for_dynamic(int64_t(up_jobs_.size()), [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) {
      const Slice& s = up_jobs_[size_t(j)];
      const int32_t first = first_[size_t(s.expert)], rows = first_[size_t(s.expert) + 1] - first;
      const int32_t width = s.r1 - s.r0;
      std::vector<float>& tmp = slice_scratch(2 * size_t(rows) * size_t(width));
      const MatrixView g = row_slice(w.gate[size_t(s.expert)], s.r0, s.r1);
      const MatrixView u = row_slice(w.up[size_t(s.expert)], s.r0, s.r1);
      const MatmulOutput gate_up[] = {{&g, tmp.data()}, {&u, tmp.data() + size_t(rows) * size_t(width)}};
      matmul_shared(gate_up, xg_.data() + size_t(first) * size_t(dim_), rows, serial_pool());
      for (int32_t t = 0; t < rows; ++t) {
        float* h = tmp.data() + size_t(t) * size_t(width);
        swiglu(h, h + size_t(rows) * size_t(width), width);
        std::copy_n(h, width, hg_.data() + size_t(first + t) * size_t(ffn_) + size_t(s.r0));
      }
    }
  });
  pool.parallel_for_dynamic(int64_t(down_jobs_.size()), [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) {
      const Slice& s = down_jobs_[size_t(j)];
      const int32_t first = first_[size_t(s.expert)], rows = first_[size_t(s.expert) + 1] - first;
      const int32_t width = s.r1 - s.r0;
      std::vector<float>& tmp = slice_scratch(size_t(rows) * size_t(width));
      matmul(row_slice(w.down[size_t(s.expert)], s.r0, s.r1), hg_.data() + size_t(first) * size_t(ffn_), tmp.data(),
             rows, serial_pool());
      for (int32_t t = 0; t < rows; ++t)
        std::copy_n(tmp.data() + size_t(t) * size_t(width), width,
                    yg_.data() + size_t(first + t) * size_t(dim_) + size_t(s.r0));
    }
  });
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
  const auto rows = [&](int64_t t0, int64_t t1) {
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
  };
  // A decode step's few tokens cost less than waking the pool.
  if (n < kMinParallelTokens) rows(0, n);
  else pool.parallel_for(n, rows);
}

}  // namespace parley
