#pragma once
// A Prometheus-style histogram: fixed bucket upper bounds, lock-free
// observe() from any thread, quantiles estimated from the buckets (linear
// interpolation inside the bucket, as PromQL's histogram_quantile does).
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace parley::obs {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);  // ascending; +Inf is implicit
  void observe(double value);

  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const;
  // The q-quantile (0 < q <= 1) estimated from the buckets; 0 without observations.
  double quantile(double q) const;
  // "# HELP/# TYPE", the cumulative _bucket{le=...} lines, _sum and _count.
  std::string prometheus(const std::string& name, const std::string& help) const;
  // The samples without the HELP and TYPE lines; `labels` ("model=\"a\"") go in every sample.
  std::string prometheus_samples(const std::string& name, const std::string& labels = "") const;
  const std::vector<double>& bounds() const { return bounds_; }
  // Per-bucket counts now (the last is +Inf); differences of two are a window's histogram.
  std::vector<uint64_t> snapshot() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // per bucket (not cumulative); last is +Inf
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_micro_{0};  // sum in millionths (atomic double add is not portable)
};

// The q-quantile of per-bucket `counts` over `bounds` (counts has one more, +Inf).
double bucket_quantile(const std::vector<double>& bounds, const std::vector<uint64_t>& counts, double q);

// Latency buckets in seconds, 1 ms … 60 s.
std::vector<double> latency_buckets();
// Powers of two 1 … 256 (batch sizes).
std::vector<double> size_buckets();

}  // namespace parley::obs
