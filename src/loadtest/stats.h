#pragma once
// Latency statistics: percentiles by linear interpolation between the closest
// ranks (numpy's default), and the summary every latency in a report gets.
#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

namespace parley::loadtest {

// p in [0, 100]; 0 for an empty sample. `sorted` must be ascending.
double percentile_sorted(const std::vector<double>& sorted, double p);

struct Summary {
  size_t count = 0;
  double mean = 0, min = 0, max = 0, p50 = 0, p90 = 0, p99 = 0;
};
Summary summarize(std::vector<double> values);
nlohmann::json to_json(const Summary& s);

}  // namespace parley::loadtest
