#pragma once
// A one-line progress bar on stderr, redrawn in place.
#include <cstdint>

namespace parley::loadtest {

// `total` requests expected (0: unknown, then `duration_s` drives the bar).
void draw_progress(int64_t finished, int64_t failed, double elapsed_s, int64_t total, double duration_s);
void end_progress();

}  // namespace parley::loadtest
