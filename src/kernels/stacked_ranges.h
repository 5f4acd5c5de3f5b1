#pragma once
// Several matrices' rows (or packed row groups) numbered one after another,
// so that one parallel loop covers them all: matmul_shared() applies Q, K
// and V (or gate and up) to the same activations in one pass over the pool.
// Each part starts at a multiple of the loop's grain, so every range a kernel
// gets starts where it would in a call for that matrix alone: tiles line up
// and the results are bit-identical.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace parley {

constexpr size_t kMaxStacked = 4;

class StackedRanges {
 public:
  explicit StackedRanges(int64_t grain) : grain_(grain) {}

  void add(int64_t count) {
    count_[n_] = count;
    first_[n_ + 1] = first_[n_] + (count + grain_ - 1) / grain_ * grain_;
    ++n_;
  }
  int64_t total() const { return first_[n_]; }
  int64_t grain() const { return grain_; }

  // fn(i, b, e) for each part i that [b, e) overlaps, with b, e local to it.
  template <class Fn>
  void split(int64_t b, int64_t e, Fn&& fn) const {
    for (size_t i = 0; i < n_; ++i) {
      const int64_t lo = std::max(b, first_[i]), hi = std::min(e, first_[i] + count_[i]);
      if (lo < hi) fn(i, lo - first_[i], hi - first_[i]);
    }
  }

 private:
  int64_t grain_;
  std::array<int64_t, kMaxStacked + 1> first_{};
  std::array<int64_t, kMaxStacked> count_{};
  size_t n_ = 0;
};

}  // namespace parley
