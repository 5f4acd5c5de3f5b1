#pragma once
// The mixture-of-experts FFN of one block, for a step's stacked tokens.
// Tokens are grouped by expert: the rows routed to expert e are gathered, run
// through e's SwiGLU as one matmul each, and scattered back with their
// router weights, so every selected expert's weights are read once per step
// (a batch-1 decode reads only its k experts). Buffers are sized at
// construction, never per step.
#include <cstdint>
#include <vector>

#include "kernels/thread_pool.h"
#include "model/config.h"
#include "model/moe_weights.h"

namespace parley {

class MoeFfn {
 public:
  MoeFfn(const ModelConfig& c, int32_t max_tokens);

  // The block's FFN output for the normed activations x[t], t < n (rows of
  // dim floats), valid until the next call.
  const float* forward(const MoeWeights& w, const float* x, int32_t n, ThreadPool& pool);

  // The last forward()'s routing: token t's experts and weights at [t * k + j].
  const int32_t* expert_ids() const { return ids_.data(); }
  const float* expert_weights() const { return weights_.data(); }
  int32_t experts_per_token() const { return k_; }
  // Experts run (each read once) over every forward() so far: a step's
  // distinct experts, summed over calls. Benchmarks divide by the calls.
  uint64_t experts_run() const { return experts_run_; }

 private:
  void route(const MoeWeights& w, const float* x, int32_t n, ThreadPool& pool);
  void group(const float* x, int32_t n);
  void plan_slices(int32_t threads);
  void run_experts(const MoeWeights& w, ThreadPool& pool);
  void shared_expert(const MoeWeights& w, const float* x, int32_t n, ThreadPool& pool);
  void scatter(const MoeWeights& w, const float* x, int32_t n, ThreadPool& pool);

  // Rows of a weight slice, one parallel job: at least kSliceRows (a multiple
  // of the packed row groups, kernels/packed_gemm.h), more when the step's
  // experts give each thread kJobsPerThread jobs without cutting them finer.
  static constexpr int32_t kSliceRows = 64;
  static constexpr int32_t kJobsPerThread = 8;
  struct Slice {
    int32_t expert, r0, r1;
  };

  int32_t dim_, n_experts_, k_, ffn_, shared_ffn_;
  bool norm_top_k_;
  std::vector<float> logits_;               // [token][expert]
  std::vector<int32_t> ids_;                // [token][j]: the chosen experts
  std::vector<float> weights_;              // [token][j]: their weights
  std::vector<int32_t> first_;              // expert e's rows: [first_[e], first_[e + 1])
  std::vector<int32_t> next_;               // expert e's next free row while grouping
  std::vector<int32_t> row_of_;             // [token][j]: its row among the grouped ones
  std::vector<float> xg_, hg_, hu_, yg_;    // grouped rows: inputs, gate, up, outputs
  std::vector<float> sg_, su_, ys_;         // shared expert: gate, up, outputs
  std::vector<float> out_;                  // [token][dim]
  std::vector<Slice> up_jobs_, down_jobs_;  // this step's: gate/up rows, down rows
  uint64_t experts_run_ = 0;
};

}  // namespace parley
