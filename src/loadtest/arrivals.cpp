#include "loadtest/arrivals.h"

#include "util/error.h"

namespace parley::loadtest {

PoissonArrivals::PoissonArrivals(double rate, uint64_t seed) : rng_(seed), gap_(rate > 0 ? rate : 1.0) {
  if (!(rate > 0)) throw Error("--rate must be a positive number of requests per second");
}

double PoissonArrivals::next_gap() { return gap_(rng_); }

}  // namespace parley::loadtest
