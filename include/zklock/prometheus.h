// zklock/prometheus.h: zklock's figures in Prometheus' text exposition format (version 0.0.4).
//
// The core library speaks no HTTP: serve the string from whatever server the application has
// (examples/metrics_http.cpp does it with cpp-httplib; the CLI's --metrics-listen too), with the
// content type kPrometheusContentType.
//
//   res.set_content(zklock::to_prometheus(zklock::process_metrics()), zklock::kPrometheusContentType);
//
// Names follow Prometheus' conventions: base units (seconds), `_total` counters, one family per
// quantity with labels (recipe, outcome, path, cause, op, code). docs/observability.md lists them.
#pragma once

#include <string>
#include <string_view>

#include "zklock/metrics.h"

namespace zklock {

inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

/// Returns: `snapshot` as Prometheus text, every family with its # HELP and # TYPE lines.
std::string to_prometheus(const MetricsSnapshot& snapshot);

}  // namespace zklock
