#pragma once
// Measures the machine's memory-read bandwidth: the bound of decoding at
// batch 1, which streams every weight once per token.
#include <cstddef>

#include "kernels/thread_pool.h"
#include "util/aligned_bytes.h"

namespace parley {

// A `bytes`-sized buffer (much larger than the caches), written once by the
// pool's threads, that measure() sums on every pool thread, each reading its
// share as several sequential streams. Kept between readings, so that a
// benchmark can take one right beside each run it compares with the bound.
class BandwidthProbe {
 public:
  BandwidthProbe(ThreadPool& pool, size_t bytes = size_t(1) << 30);
  // Best of `reps` passes, in bytes per second.
  double measure(int reps = 5);

 private:
  ThreadPool& pool_;
  AlignedBytes buf_;
};

// One probe, one reading.
double measure_read_bandwidth(ThreadPool& pool, size_t bytes = size_t(1) << 30, int reps = 5);

}  // namespace parley
