#pragma once
// Measures the machine's memory-read bandwidth: the bound of decoding at
// batch 1, which streams every weight once per token.
#include <cstddef>

#include "kernels/thread_pool.h"

namespace parley {

// Best of `reps` passes summing a `bytes`-sized buffer (much larger than the
// caches) on every pool thread, each reading its share as several sequential
// streams; returns bytes per second.
double measure_read_bandwidth(ThreadPool& pool, size_t bytes = size_t(1) << 30, int reps = 5);

}  // namespace parley
