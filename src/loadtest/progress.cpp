#include "loadtest/progress.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace parley::loadtest {

void draw_progress(int64_t finished, int64_t failed, double elapsed_s, int64_t total, double duration_s) {
  double done = total > 0 ? double(finished) / double(total) : duration_s > 0 ? elapsed_s / duration_s : 0;
  done = std::clamp(done, 0.0, 1.0);
  constexpr int kWidth = 30;
  const int filled = int(done * kWidth + 0.5);
  const std::string bar = std::string(size_t(filled), '#') + std::string(size_t(kWidth - filled), '.');
  std::fprintf(stderr, "\r[%s] %lld done, %lld failed, %.1f s ", bar.c_str(), (long long)finished, (long long)failed,
               elapsed_s);
  std::fflush(stderr);
}

void end_progress() { std::fprintf(stderr, "\n"); }

}  // namespace parley::loadtest
