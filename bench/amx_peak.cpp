// The bf16 tile peak of one core, sampled over time: tdpbf16ps on 4 C tiles
// from 2 A and 2 B tiles held in registers (no memory traffic), in bursts
// of 4 x 100,000 products timed by the thread's CPU time, for SECONDS
// seconds (default 10):
//   bench_amx_peak [SECONDS]
// The kernels' figures on a shared host are only as steady as this one: a
// tenant on the other hyperthread of the same physical core shares its AMX
// unit, and the rate drops by half for as long as it runs (the distribution
// printed shows such phases). Compiled with the AMX flags; exits with a
// message on a CPU without AMX.
#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "thread_time.h"
#include "kernels/amx_tiles.h"
#include "kernels/cpu.h"

namespace {

// One burst: 4 * n tile products of 16 x 16 x 32 bf16 (16,384 flops each).
double burst_tflops(long n) {
  const double t0 = thread_seconds();
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (long i = 0; i < n; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  alignas(64) float sink[16][16];
  _tile_stored(0, sink, 64);  // the products must finish inside the timing
  return 4.0 * double(n) * 16384.0 / (thread_seconds() - t0) / 1e12;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace parley;
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
  if (!isa_supported(Isa::Amx)) {  // also asks Linux for the tile data permission
    std::fprintf(stderr, "bench_amx_peak: this CPU (or kernel) offers no AMX\n");
    return 2;
  }
  configure_full_tiles();
  alignas(64) static uint16_t zeros[16][32];
  _tile_loadd(4, zeros, 64);
  _tile_loadd(5, zeros, 64);
  _tile_loadd(6, zeros, 64);
  _tile_loadd(7, zeros, 64);
  std::vector<double> rates;
  for (const double start = thread_seconds(); thread_seconds() - start < seconds;) rates.push_back(burst_tflops(100000));
  _tile_release();
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  const double best = sorted.back();
  const auto slow = std::count_if(rates.begin(), rates.end(), [&](double r) { return r < 0.6 * best; });
  std::printf("bf16 tile peak, one thread, %zu bursts: min %.2f, median %.2f, max %.2f TFLOP/s; %.0f%% of bursts "
              "below 60%% of the max\n",
              rates.size(), sorted.front(), sorted[sorted.size() / 2], best, 100.0 * double(slow) / double(rates.size()));
}
