#include "metrics/metrics_registry.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace zklock::detail {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<const SessionMetrics*> live;
  MetricsSnapshot retired;
};

Registry& registry() {
  static auto* const instance = new Registry;  // never destroyed: sessions may outlive main
  return *instance;
}

}  // namespace

void MetricsRegistry::add(SessionMetrics* metrics) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.live.push_back(metrics);
}

void MetricsRegistry::remove(SessionMetrics* metrics) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.live.erase(std::remove(r.live.begin(), r.live.end(), metrics), r.live.end());
  metrics->gauges_ = nullptr;
  r.retired.merge(metrics->counters_snapshot());
}

void MetricsRegistry::set_gauge_source(SessionMetrics& metrics,
                                       SessionMetrics::GaugeSource source) {
  std::lock_guard lock(registry().mutex);
  metrics.gauges_ = std::move(source);
}

MetricsSnapshot MetricsRegistry::snapshot_of(const SessionMetrics& metrics) {
  MetricsSnapshot s = metrics.counters_snapshot();
  std::lock_guard lock(registry().mutex);
  if (metrics.gauges_) metrics.gauges_(s);
  return s;
}

MetricsSnapshot MetricsRegistry::process() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  MetricsSnapshot total = r.retired;
  for (const SessionMetrics* m : r.live) {
    MetricsSnapshot s = m->counters_snapshot();
    if (m->gauges_) m->gauges_(s);
    total.merge(s);
  }
  return total;
}

}  // namespace zklock::detail
