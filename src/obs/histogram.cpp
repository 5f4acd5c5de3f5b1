#include "obs/histogram.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace parley::obs {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  std::sort(bounds_.begin(), bounds_.end());
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i] = 0;
}

void Histogram::observe(double value) {
  if (!std::isfinite(value)) return;
  const size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_micro_.fetch_add(uint64_t(std::max(0.0, value) * 1e6), std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

double Histogram::sum() const { return double(sum_micro_.load(std::memory_order_relaxed)) / 1e6; }

std::vector<uint64_t> Histogram::snapshot() const {
  std::vector<uint64_t> counts(bounds_.size() + 1);
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = buckets_[i].load(std::memory_order_relaxed);
  return counts;
}

double Histogram::quantile(double q) const { return bucket_quantile(bounds_, snapshot(), q); }

double bucket_quantile(const std::vector<double>& bounds, const std::vector<uint64_t>& counts, double q) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  if (total == 0) return 0;
  const double rank = std::clamp(q, 0.0, 1.0) * double(total);
  uint64_t below = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (double(below + counts[i]) >= rank && counts[i] > 0) {
      // The +Inf bucket has no upper bound: report the highest finite one.
      if (i >= bounds.size()) return bounds.empty() ? 0 : bounds.back();
      const double lo = i == 0 ? 0 : bounds[i - 1];
      return lo + (bounds[i] - lo) * (rank - double(below)) / double(counts[i]);
    }
    below += counts[i];
  }
  return bounds.empty() ? 0 : bounds.back();
}

std::string Histogram::prometheus(const std::string& name, const std::string& help) const {
  return "# HELP " + name + ' ' + help + "\n# TYPE " + name + " histogram\n" + prometheus_samples(name);
}

std::string Histogram::prometheus_samples(const std::string& name, const std::string& labels) const {
  std::ostringstream out;
  const std::string more = labels.empty() ? "" : labels + ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    out << name << "_bucket{" << more << "le=\"";
    if (i == bounds_.size()) out << "+Inf";
    else out << bounds_[i];
    out << "\"} " << cumulative << '\n';
  }
  const std::string braced = labels.empty() ? "" : "{" + labels + "}";
  out << name << "_sum" << braced << ' ' << sum() << '\n' << name << "_count" << braced << ' ' << cumulative << '\n';
  return out.str();
}

std::vector<double> latency_buckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

std::vector<double> size_buckets() { return {1, 2, 4, 8, 16, 32, 64, 128, 256}; }

}  // namespace parley::obs
