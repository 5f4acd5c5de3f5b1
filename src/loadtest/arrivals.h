#pragma once
// Open-loop arrivals: a Poisson process of `rate` requests per second, i.e.
// independent exponential gaps of mean 1/rate, reproducible from a seed.
#include <cstdint>
#include <random>

namespace parley::loadtest {

class PoissonArrivals {
 public:
  PoissonArrivals(double rate, uint64_t seed);
  double next_gap();  // seconds until the next arrival

 private:
  std::mt19937_64 rng_;
  std::exponential_distribution<double> gap_;
};

}  // namespace parley::loadtest
