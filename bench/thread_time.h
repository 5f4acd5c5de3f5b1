#pragma once
// The calling thread's CPU time in seconds: the single-thread benchmarks take
// the best of many runs by it, so that other tenants of a shared host move
// the figure less than wall-clock timing does.
#include <time.h>

inline double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}
