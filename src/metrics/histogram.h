// AtomicHistogram: a fixed-bucket histogram that any thread may add to without a lock (internal).
//
// An observation costs a search of at most a few dozen bounds and three relaxed atomic additions;
// nothing allocates after construction. A snapshot reads each bucket atomically; an observation
// made while it reads may be in some of its figures and not others (as with every Prometheus
// client library).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "zklock/metrics.h"

namespace zklock::detail {

class AtomicHistogram {
 public:
  /// `bounds`: the upper bounds, increasing; values are stored in units of 1 / `scale` (seconds
  /// in nanoseconds: scale 1e9), so that the sum stays an integer.
  AtomicHistogram(std::vector<double> bounds, double scale);

  /// Effects: counts one observation of `units` (in 1 / scale).
  void observe(std::uint64_t units) noexcept;

  Histogram snapshot() const;

 private:
  const std::vector<double> bounds_;
  std::vector<std::uint64_t> unit_bounds_;  // bounds_ in units, for the search
  const double scale_;
  std::vector<std::atomic<std::uint64_t>> counts_;  // bounds_.size() + 1, never resized
  std::atomic<std::uint64_t> sum_{0};
};

/// Bucket bounds, in seconds or counts. Shared by every histogram of a kind so that snapshots of
/// different sessions merge.
const std::vector<double>& wait_bounds();       // lock waits and holds: 1 ms to 10 min
const std::vector<double>& latency_bounds();    // heartbeats: 0.1 ms to 10 s
const std::vector<double>& suspended_bounds();  // Suspended episodes: 10 ms to 5 min
const std::vector<double>& queue_bounds();      // queue lengths: 1 to 10,000

}  // namespace zklock::detail
