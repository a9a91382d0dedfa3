// MetricsRegistry: every live SessionMetrics of the process, and the sum of those destroyed
// (internal). Its lock is taken when a Session is made or destroyed and when figures are read -
// never on a recording path. It is held while a session's gauge source runs (which may take that
// session's recipe locks), so nothing may take it with a zklock lock held.
#pragma once

#include "metrics/session_metrics.h"
#include "zklock/metrics.h"

namespace zklock::detail {

class MetricsRegistry {
 public:
  static void add(SessionMetrics* metrics);
  /// Effects: keeps `metrics`' counters (its gauges go: a closed session holds nothing).
  static void remove(SessionMetrics* metrics);
  static void set_gauge_source(SessionMetrics& metrics, SessionMetrics::GaugeSource source);
  /// Returns: `metrics`' figures with its gauges.
  static MetricsSnapshot snapshot_of(const SessionMetrics& metrics);
  /// Returns: the sum over every SessionMetrics, live and destroyed.
  static MetricsSnapshot process();
};

}  // namespace zklock::detail
