// Activation quantization: the portable loop (acts_avx2.cpp has the fast one)
// and the per-thread buffers it fills.
#include "kernels/acts.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu.h"

namespace parley {
namespace {

// Symmetric 8-bit quantization of n values to [-127, 127]; returns the scale.
float quantize_q8(const float* x, int n, int8_t* q) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  // Ties to even, as the AVX2 version's conversion rounds.
  for (int i = 0; i < n; ++i) q[i] = int8_t(std::nearbyint(x[i] * id));
  return d;
}

int sum_q8(const int8_t* q, int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += q[i];
  return sum;
}

// A dispatch to the pool costs about 0.2 us; quantizing 4096 values takes
// a few. From there the other threads help: a batch-16 decode step of
// llama-110m (16 x 768 values, three times a layer) ran 2-3% faster
// split than on one thread (docs/performance.md).
constexpr int64_t kMinParallelElems = 1 << 12;

struct Scratch {
  std::vector<int8_t> q;
  std::vector<float> d, s;
  std::vector<int32_t> sums;
  std::vector<int16_t> bsums;
};

template <class T>
T* grown(std::vector<T>& v, int64_t n) {
  if (int64_t(v.size()) < n + kActPad) v.resize(size_t(n + kActPad));
  return v.data();
}

}  // namespace

void quantize_acts(const float* x, int64_t blocks, int block, int8_t* q, float* d, const ActSums& out) {
  for (int64_t b = 0; b < blocks; ++b) {
    int8_t* qb = q + b * block;
    d[b] = quantize_q8(x + b * block, block, qb);
    const int total = sum_q8(qb, block);
    if (out.s) out.s[b] = d[b] * float(total);
    if (out.sums) out.sums[b] = total;
    if (out.bsums)
      for (int j = 0; j < block / 16; ++j) out.bsums[b * block / 16 + j] = int16_t(sum_q8(qb + 16 * j, 16));
  }
}

ActFormat act_format(DType weights) {
  switch (weights) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return ActFormat::Float;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::IQ4_XS:
    case DType::Q6_K: return ActFormat::Q8x256;
    default: return ActFormat::Q8x32;
  }
}

Acts prepare_acts(DType weights, const float* x, int64_t cols, int64_t n_tokens, ThreadPool& pool) {
  return prepare_acts(act_format(weights), x, cols, n_tokens, pool);
}

Acts prepare_acts(ActFormat format, const float* x, int64_t cols, int64_t n_tokens, ThreadPool& pool) {
  Acts a;
  a.cols = cols;
  if (format == ActFormat::Float) {
    a.f = x;
    return a;
  }
  thread_local Scratch scratch;
  const bool q32 = format != ActFormat::Q8x256;
  const int block = q32 ? 32 : 256;
  a.blocks = cols / block;
  int8_t* q = grown(scratch.q, n_tokens * cols);
  float* d = grown(scratch.d, n_tokens * a.blocks);
  float* s = q32 ? grown(scratch.s, n_tokens * a.blocks) : nullptr;
  int32_t* sums = q32 ? grown(scratch.sums, n_tokens * a.blocks) : nullptr;
  int16_t* bsums = format == ActFormat::Q8x32 ? nullptr : grown(scratch.bsums, n_tokens * cols / 16);
  const auto quantize = active_isa() == Isa::Scalar ? quantize_acts : quantize_acts_avx2;
  const auto quantize_tokens = [&](int64_t t0, int64_t t1) {
    const int64_t b = t0 * a.blocks;
    const ActSums out{s ? s + b : nullptr, sums ? sums + b : nullptr, bsums ? bsums + b * block / 16 : nullptr};
    quantize(x + b * block, (t1 - t0) * a.blocks, block, q + b * block, d + b, out);
  };
  // Split over the pool only when there is enough to split (a batch, a prefill).
  if (n_tokens > 1 && n_tokens * cols >= kMinParallelElems) pool.parallel_for(n_tokens, quantize_tokens);
  else quantize_tokens(0, n_tokens);
  a.q = q;
  a.d = d;
  a.s = s;
  a.sums = sums;
  a.bsums = bsums;
  return a;
}

}  // namespace parley
