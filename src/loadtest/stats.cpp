#include "loadtest/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace parley::loadtest {

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * double(sorted.size() - 1);
  const size_t lo = size_t(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - double(lo));
}

Summary summarize(std::vector<double> values) {
  Summary s;
  s.count = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
  s.min = values.front();
  s.max = values.back();
  s.p50 = percentile_sorted(values, 50);
  s.p90 = percentile_sorted(values, 90);
  s.p99 = percentile_sorted(values, 99);
  return s;
}

nlohmann::json to_json(const Summary& s) {
  auto r = [](double x) { return std::round(x * 100) / 100; };  // 0.01 ms is plenty
  return {{"count", s.count}, {"mean", r(s.mean)}, {"min", r(s.min)}, {"p50", r(s.p50)},
          {"p90", r(s.p90)},  {"p99", r(s.p99)},   {"max", r(s.max)}};
}

}  // namespace parley::loadtest
