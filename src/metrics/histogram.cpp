#include "metrics/histogram.h"

#include <algorithm>
#include <cmath>

namespace zklock::detail {

AtomicHistogram::AtomicHistogram(std::vector<double> bounds, double scale)
    : bounds_(std::move(bounds)), scale_(scale), counts_(bounds_.size() + 1) {
  unit_bounds_.reserve(bounds_.size());
  for (const double b : bounds_)
    unit_bounds_.push_back(static_cast<std::uint64_t>(std::llround(b * scale_)));
  for (std::size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void AtomicHistogram::observe(std::uint64_t units) noexcept {
  // Buckets are "less than or equal to the bound" (Prometheus' le).
  const auto bucket = static_cast<std::size_t>(
      std::lower_bound(unit_bounds_.begin(), unit_bounds_.end(), units) - unit_bounds_.begin());
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(units, std::memory_order_relaxed);
}

Histogram AtomicHistogram::snapshot() const {
  Histogram h;
  h.bounds = bounds_;
  h.counts.resize(bounds_.size() + 1);
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    h.counts[i] = counts_[i].load(std::memory_order_relaxed);
    h.count += h.counts[i];
  }
  h.sum = static_cast<double>(sum_.load(std::memory_order_relaxed)) / scale_;
  return h;
}

const std::vector<double>& wait_bounds() {
  static const std::vector<double> bounds{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                          1,     2.5,    5,     10,   30,    60,   120, 300,  600};
  return bounds;
}

const std::vector<double>& latency_bounds() {
  static const std::vector<double> bounds{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                          0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                          1,      2.5,     5,      10};
  return bounds;
}

const std::vector<double>& suspended_bounds() {
  static const std::vector<double> bounds{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 300};
  return bounds;
}

const std::vector<double>& queue_bounds() {
  static const std::vector<double> bounds{1,   2,   3,   5,    10,   20,   50,
                                          100, 200, 500, 1000, 2000, 5000, 10000};
  return bounds;
}

}  // namespace zklock::detail
