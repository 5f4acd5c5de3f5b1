// bench_sampler: one Sampler::sample() call at temperature > 0 on a row of
// random logits (normal, sd 3) of the given vocabulary size (default 32000,
// Llama 2's), for the usual filter settings; one thread, CPU time per call,
// best of 5 rounds of 200 calls (each on a fresh copy of the row, the copy
// included). PARLEY_ISA picks the ops' path.
//   bench_sampler [VOCAB]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "engine/sampler.h"
#include "kernels/cpu.h"
#include "thread_time.h"

int main(int argc, char** argv) {
  using namespace parley;
  const int32_t n = argc > 1 ? std::atoi(argv[1]) : 32000;
  if (n < 1) return std::fprintf(stderr, "usage: bench_sampler [VOCAB]\n"), 2;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(static_cast<size_t>(n)), work(logits.size());
  for (float& l : logits) l = normal(rng);
  struct Setting {
    const char* name;
    int32_t top_k;
    float top_p, min_p;
  };
  const Setting settings[] = {{"temperature only", 0, 1.0f, 0.0f},
                              {"top-p 0.95", 0, 0.95f, 0.0f},
                              {"top-k 40", 40, 1.0f, 0.0f},
                              {"top-k 40, top-p 0.95", 40, 0.95f, 0.0f},
                              {"min-p 0.05", 0, 1.0f, 0.05f}};
  std::printf("vocabulary %d, temperature 0.8, path %s: us per sampled token\n", n,
              std::string(isa_name(active_isa())).c_str());
  for (const Setting& s : settings) {
    SamplingParams p;
    p.temperature = 0.8f;
    p.top_k = s.top_k;
    p.top_p = s.top_p;
    p.min_p = s.min_p;
    p.seed = 1;
    Sampler sampler(p, n);
    double best = 1e30;
    int64_t checksum = 0;  // keeps the draws alive
    for (int round = 0; round < 5; ++round) {
      const double t0 = thread_seconds();
      for (int i = 0; i < 200; ++i) {
        std::copy(logits.begin(), logits.end(), work.begin());
        checksum += sampler.sample(work.data());
      }
      best = std::min(best, (thread_seconds() - t0) / 200);
    }
    std::printf("%-22s %8.2f  (draws %lld)\n", s.name, best * 1e6, static_cast<long long>(checksum));
  }
}
