#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernels/attention_avx2.h"
#include "kernels/attention_avx512.h"
#include "kernels/cpu.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "util/error.h"

namespace parley {
namespace {

constexpr int32_t kTile = 32;  // slots scored before their values are summed
constexpr float kNoScore = -std::numeric_limits<float>::infinity();

// A K or V row as floats: F32 rows are read in place unless they must be
// modified (rotated), others are converted into `buf`.
const float* row_as_float(DType type, const uint8_t* src, float* buf, int32_t n, bool writable) {
  if (type == DType::F32 && !writable) return reinterpret_cast<const float*>(src);
  kv_row_to_float(type, src, buf, n);
  return buf;
}

void scale_row(float* x, float s, int32_t n) {
  for (int32_t i = 0; i < n; ++i) x[i] *= s;
}

// Per query head (of every KV head attended): the running max of the scores
// and the running sum of exp(score - max); the output rows hold the matching
// running weighted sum.
struct RunningSoftmax {
  float max[kMaxAttentionGroup];
  float sum[kMaxAttentionGroup];
};

class Attention {
 public:
  Attention(const PagedKv& kv, const AttentionQuery& a)
      : kv_(kv),
        a_(a),
        hd_(a.head_dim),
        rot_(a.rotation),
        fast_(use_avx2() && a.head_dim % 8 == 0),
        wide_(active_isa() >= Isa::Avx512 && kv.type == DType::Q8_0) {}

  void run() {
    const int32_t heads = a_.kv_heads * a_.group;
    std::fill_n(a_.out, size_t(heads) * size_t(hd_), 0.0f);
    std::fill_n(sm_.max, heads, kNoScore);
    std::fill_n(sm_.sum, heads, 0.0f);
    for (int32_t t0 = a_.first; t0 < a_.end; t0 += kTile) {
      const int32_t n = std::min(kTile, a_.end - t0);
      for (int32_t m = 0; m < a_.kv_heads; ++m) {
        if (t0 + kTile < a_.end) prefetch_keys(m, t0 + kTile, std::min(kTile, a_.end - t0 - kTile));
        score_tile(m, t0, n);
        rescale(m, n);
        accumulate(m, n);
      }
    }
    finish();
  }

 private:
  bool live(int32_t slot) const {
    if (!rot_) return true;
    const int32_t pos = rot_->slot_pos[slot];
    return pos >= a_.min_pos && pos <= a_.max_pos && pos >= 0;
  }

  // Row pointers of KV head kv_head + m's slots [t0, t0 + n), walking the
  // blocks rather than dividing by the block size for every slot.
  template <class Fn>
  void for_rows(int32_t m, int32_t t0, int32_t n, Fn&& fn) const {
    int32_t block = t0 / kv_.block_size, in_block = t0 % kv_.block_size;
    for (int32_t j = 0; j < n;) {
      const size_t base = kv_.block_offset(block, a_.kv_head + m);
      for (; in_block < kv_.block_size && j < n; ++in_block, ++j) {
        const size_t at = base + size_t(in_block) * kv_.slot_stride;
        fn(j, kv_.k + at, kv_.v + at);
      }
      ++block;
      in_block = 0;
    }
  }

  // A sequence's rows sit in blocks scattered over the pool, a few KB of
  // each head at a time: past the serving batch's first steps they come from
  // memory, and each block's first rows would stall the kernel. So the next
  // tile's K rows are asked for before this tile is scored, and this tile's V
  // rows before its scores are computed. A head's rows of a block are
  // contiguous, so each block's run of them is asked for line by line.
  template <class Fn>
  void for_runs(int32_t m, int32_t t0, int32_t n, Fn&& fn) const {
    int32_t block = t0 / kv_.block_size, in_block = t0 % kv_.block_size;
    for (int32_t j = 0; j < n; ++block, in_block = 0) {
      const int32_t end = std::min(kv_.block_size, in_block + (n - j));
      const size_t base = kv_.block_offset(block, a_.kv_head + m);
      fn(base + size_t(in_block) * kv_.slot_stride, base + size_t(end) * kv_.slot_stride);
      j += end - in_block;
    }
  }
  static void prefetch(const uint8_t* from, size_t begin, size_t end) {
    for (size_t at = begin & ~size_t(63); at < end; at += 64) __builtin_prefetch(from + at);
  }
  void prefetch_keys(int32_t m, int32_t t0, int32_t n) const {
    for_runs(m, t0, n, [&](size_t begin, size_t end) { prefetch(kv_.k, begin, end); });
  }
  void prefetch_values(int32_t m, int32_t t0, int32_t n) const {
    for_runs(m, t0, n, [&](size_t begin, size_t end) { prefetch(kv_.v, begin, end); });
  }

  // The query heads, scores and outputs of KV head kv_head + m.
  const float* q_of(int32_t m) const { return a_.q + size_t(m) * size_t(a_.group) * size_t(hd_); }
  float* out_of(int32_t m) const { return a_.out + size_t(m) * size_t(a_.group) * size_t(hd_); }

  void score_tile(int32_t m, int32_t t0, int32_t n) {
    for_rows(m, t0, n, [&](int32_t j, const uint8_t* k, const uint8_t* v) {
      const bool in = live(t0 + j);
      krows_[j] = in ? k : nullptr;
      vrows_[j] = in ? v : nullptr;
    });
    prefetch_values(m, t0, n);
    float(*scores)[kTile] = scores_ + m * a_.group;
    const float* q = q_of(m);
    for (int32_t g = 0; g < a_.group; ++g) std::fill_n(scores[g], n, kNoScore);
    if (fast_ && !rot_) {
      if (wide_) avx512::attention_scores_q8_0(krows_, n, q, a_.group, hd_, a_.scale, scores[0], kTile);
      else avx2::attention_scores(kv_.type, krows_, n, q, a_.group, hd_, a_.scale, scores[0], kTile);
    } else {
      for (int32_t j = 0; j < n; ++j) {
        if (!krows_[j]) continue;
        const float* k = row_as_float(kv_.type, krows_[j], kbuf_, hd_, rot_ != nullptr);
        if (rot_) rot_->rotate(rot_->ctx, kbuf_, rot_->slot_pos[t0 + j]);
        for (int32_t g = 0; g < a_.group; ++g) scores[g][j] = dot(q + size_t(g) * size_t(hd_), k, hd_) * a_.scale;
      }
    }
    if (a_.softcap > 0.0f)
      for (int32_t j = 0; j < n; ++j)
        if (krows_[j])
          for (int32_t g = 0; g < a_.group; ++g) scores[g][j] = a_.softcap * std::tanh(scores[g][j] / a_.softcap);
    if (a_.weights)  // raw scores for now; finish() turns them into weights
      for (int32_t g = 0; g < a_.group; ++g)
        std::copy_n(scores[g], n, a_.weights + size_t(g) * size_t(a_.end - a_.first) + size_t(t0 - a_.first));
  }

  // Moves each head's running max up to cover the tile (rescaling the sums),
  // then turns the tile's scores into exp(score - max).
  void rescale(int32_t m, int32_t n) {
    for (int32_t h = m * a_.group; h < (m + 1) * a_.group; ++h) {
      float* s = scores_[h];
      const float tile_max = fast_ ? avx2::max_of(s, n) : *std::max_element(s, s + n);
      if (tile_max > sm_.max[h]) {
        const float c = std::exp(sm_.max[h] - tile_max);  // 0 for the first live tile
        sm_.sum[h] *= c;
        scale_row(a_.out + size_t(h) * size_t(hd_), c, hd_);
        sm_.max[h] = tile_max;
      }
      if (fast_ && sm_.max[h] != kNoScore) {
        sm_.sum[h] += avx2::exp_shifted(s, n, sm_.max[h]);
        continue;
      }
      for (int32_t j = 0; j < n; ++j) {
        s[j] = s[j] == kNoScore ? 0.0f : std::exp(s[j] - sm_.max[h]);
        sm_.sum[h] += s[j];
      }
    }
  }

  void accumulate(int32_t m, int32_t n) {
    const float(*p)[kTile] = scores_ + m * a_.group;
    float* out = out_of(m);
    if (wide_) return avx512::attention_values_q8_0(vrows_, n, p[0], kTile, a_.group, hd_, out);
    if (fast_) return avx2::attention_values(kv_.type, vrows_, n, p[0], kTile, a_.group, hd_, out);
    for (int32_t j = 0; j < n; ++j) {
      if (!vrows_[j]) continue;
      const float* v = row_as_float(kv_.type, vrows_[j], vbuf_, hd_, false);
      for (int32_t g = 0; g < a_.group; ++g) axpy(out + size_t(g) * size_t(hd_), p[g][j], v, hd_);
    }
  }

  void finish() {
    const size_t width = size_t(a_.end - a_.first);
    for (int32_t h = 0; h < a_.kv_heads * a_.group; ++h) {
      const float inv = sm_.sum[h] > 0.0f ? 1.0f / sm_.sum[h] : 0.0f;
      scale_row(a_.out + size_t(h) * size_t(hd_), inv, hd_);
      if (!a_.weights) continue;
      float* w = a_.weights + size_t(h) * width;
      for (size_t j = 0; j < width; ++j) w[j] = std::exp(w[j] - sm_.max[h]) * inv;
    }
  }

  const PagedKv& kv_;
  const AttentionQuery& a_;
  const int32_t hd_;
  const KeyRotation* rot_;
  const bool fast_;  // the SIMD paths read rows straight from the cache
  const bool wide_;  // Q8_0 rows 16 floats at a time (AVX-512)
  RunningSoftmax sm_;
  const uint8_t* krows_[kTile];  // this tile's rows; null for slots not attended
  const uint8_t* vrows_[kTile];
  float scores_[kMaxAttentionGroup][kTile];
  alignas(64) float kbuf_[kMaxAttentionHeadDim];
  alignas(64) float vbuf_[kMaxAttentionHeadDim];
};

}  // namespace

void paged_attention(const PagedKv& kv, const AttentionQuery& query) {
  if (query.group < 1 || query.kv_heads < 1 || query.group * query.kv_heads > kMaxAttentionGroup ||
      query.head_dim < 1 || query.head_dim > kMaxAttentionHeadDim || query.end <= query.first ||
      (query.weights && query.kv_heads != 1))
    throw Error("paged_attention: unsupported shape (group " + std::to_string(query.group) + ", KV heads " +
                std::to_string(query.kv_heads) + ", head_dim " + std::to_string(query.head_dim) + ", slots " +
                std::to_string(query.end - query.first) + (query.weights ? ", with weights" : "") + ")");
  Attention(kv, query).run();
}

void kv_row_to_float(DType type, const uint8_t* src, float* dst, int32_t n) {
  if (use_avx2() && type == DType::F16) return avx2::f16_row_to_float(src, dst, n);
  if (use_avx2() && type == DType::Q8_0) return avx2::q8_0_row_to_float(src, dst, n);
  dequantize_row(type, src, dst, n);
}

void kv_row_from_float(DType type, const float* src, uint8_t* dst, int32_t n) {
  if (use_avx2() && type == DType::F16) return avx2::float_row_to_f16(src, dst, n);
  if (use_avx2() && type == DType::Q8_0) return avx2::float_row_to_q8_0(src, dst, n);
  quantize_row(type, src, dst, n);
}

}  // namespace parley
