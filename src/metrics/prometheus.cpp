// to_prometheus(): MetricsSnapshot in Prometheus' text exposition format 0.0.4.
// https://prometheus.io/docs/instrumenting/exposition_formats/ - one # HELP and one # TYPE line
// per family, then its samples; histograms as cumulative _bucket{le} series, _sum and _count.
#include "zklock/prometheus.h"

#include <array>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <utility>
#include <vector>

namespace zklock {
namespace {

using Labels = std::vector<std::pair<std::string_view, std::string>>;

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  std::array<char, 64> buffer{};
  const auto result =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), v);  // shortest round trip
  return {buffer.data(), result.ptr};
}

std::string number(std::uint64_t v) { return std::to_string(v); }
std::string number(std::int64_t v) { return std::to_string(v); }

// Label values escape backslash, double quote and newline (the format's rule).
void append_label_value(std::string& out, const std::string& value) {
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

class Writer {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  void sample(std::string_view name, const Labels& labels, const std::string& value) {
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      bool first = true;
      for (const auto& [key, v] : labels) {
        if (!first) out_ += ',';
        first = false;
        out_ += key;
        out_ += "=\"";
        append_label_value(out_, v);
        out_ += '"';
      }
      out_ += '}';
    }
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }

  void histogram(std::string_view name, Labels labels, const Histogram& h) {
    const std::string base(name);
    std::uint64_t cumulative = 0;
    labels.emplace_back("le", "");
    for (std::size_t i = 0; i < h.bounds.size() && i < h.counts.size(); ++i) {
      cumulative += h.counts[i];
      labels.back().second = number(h.bounds[i]);
      sample(base + "_bucket", labels, number(cumulative));
    }
    labels.back().second = "+Inf";
    sample(base + "_bucket", labels, number(h.count));
    labels.pop_back();
    sample(base + "_sum", labels, number(h.sum));
    sample(base + "_count", labels, number(h.count));
  }

  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

bool active(const LockFigures& f) {
  for (const auto n : f.acquisitions) {
    if (n != 0) return true;
  }
  return f.hold.count != 0;
}

}  // namespace

std::string to_prometheus(const MetricsSnapshot& s) {
  // Series of a recipe and path appear once it has been used, and always for the paths the
  // application named (so that rate() has a zero to start from) and for Mutex on all paths.
  std::vector<std::pair<Labels, const LockFigures*>> locks;
  for (const auto& [key, figures] : s.locks) {
    const bool baseline = key.first == Recipe::kMutex && key.second.empty();
    const bool named = !key.second.empty();
    if (!baseline && !named && !active(figures)) continue;
    locks.push_back(
        {Labels{{"recipe", std::string(to_string(key.first))}, {"path", key.second}}, &figures});
  }

  Writer w;
  w.family("zklock_lock_acquisitions_total", "counter",
           "Lock acquisitions ended, by recipe, lock path (\"\": every path not broken out) and "
           "outcome.");
  for (const auto& [labels, f] : locks) {
    for (std::size_t o = 0; o < kAcquireOutcomeCount; ++o) {
      Labels l = labels;
      l.emplace_back("outcome", std::string(to_string(static_cast<AcquireOutcome>(o))));
      w.sample("zklock_lock_acquisitions_total", l, number(f->acquisitions[o]));
    }
  }
  w.family("zklock_lock_contended_total", "counter",
           "Acquisitions that had to wait behind another contender.");
  for (const auto& [labels, f] : locks) {
    w.sample("zklock_lock_contended_total", labels, number(f->contended));
  }
  w.family("zklock_lock_wait_seconds", "histogram",
           "Time from an acquisition's call to its outcome, every outcome included.");
  for (const auto& [labels, f] : locks) w.histogram("zklock_lock_wait_seconds", labels, f->wait);
  w.family("zklock_lock_hold_seconds", "histogram",
           "Time from acquired to the end of the hold (released or lost).");
  for (const auto& [labels, f] : locks) w.histogram("zklock_lock_hold_seconds", labels, f->hold);
  w.family("zklock_lock_queue_length", "histogram",
           "Contenders in line, this one included, when an acquisition first queued.");
  for (const auto& [labels, f] : locks) {
    w.histogram("zklock_lock_queue_length", labels, f->queue_length);
  }
  w.family("zklock_lock_holds_ended_total", "counter",
           "Holds ended, by how: released, session_silent, session_expired, node_deleted, "
           "closed.");
  for (const auto& [labels, f] : locks) {
    for (std::size_t e = 0; e < kHoldEndCount; ++e) {
      Labels l = labels;
      l.emplace_back("end", std::string(to_string(static_cast<HoldEnd>(e))));
      w.sample("zklock_lock_holds_ended_total", l, number(f->hold_ends[e]));
    }
  }

  w.family("zklock_sessions_total", "counter", "zklock Session objects opened.");
  w.sample("zklock_sessions_total", {}, number(s.sessions));
  w.family("zklock_session_generations_total", "counter",
           "ZooKeeper sessions opened (a Session opens a new one after each Lost).");
  w.sample("zklock_session_generations_total", {}, number(s.generations));
  w.family("zklock_sessions_lost_total", "counter",
           "Sessions declared Lost: silent past the Lost rule, or expired by the server.");
  for (std::size_t c = 0; c < kLostCauseCount; ++c) {
    w.sample("zklock_sessions_lost_total",
             {{"cause", std::string(to_string(static_cast<LostCause>(c)))}},
             number(s.sessions_lost[c]));
  }
  w.family("zklock_session_suspensions_total", "counter", "Suspended episodes begun.");
  w.sample("zklock_session_suspensions_total", {}, number(s.suspensions));
  w.family("zklock_session_suspended_seconds", "histogram",
           "How long each ended Suspended episode lasted.");
  w.histogram("zklock_session_suspended_seconds", {}, s.suspended);
  w.family("zklock_session_forced_reconnects_total", "counter",
           "Silent connections dropped for a fresh one (the session kept).");
  w.sample("zklock_session_forced_reconnects_total", {}, number(s.forced_reconnects));
  w.family("zklock_heartbeat_seconds", "histogram",
           "Round trip of each heartbeat's read (a sync beside it on an ensemble).");
  w.histogram("zklock_heartbeat_seconds", {}, s.heartbeat);
  w.family("zklock_confirmation_lag_seconds", "gauge",
           "The leader-confirmation lag the Lost rule allows for (largest over sessions).");
  w.sample("zklock_confirmation_lag_seconds", {}, number(s.confirmation_lag_seconds));
  w.family("zklock_requests_total", "counter", "Requests sent to ZooKeeper, by operation.");
  for (const auto& [op, n] : s.requests) w.sample("zklock_requests_total", {{"op", op}}, number(n));
  w.family("zklock_request_errors_total", "counter",
           "Answers other than ok, by code (no_node and node_exists are part of the recipe).");
  for (const auto& [code, n] : s.errors) {
    w.sample("zklock_request_errors_total", {{"code", code}}, number(n));
  }
  w.family("zklock_nodes", "gauge", "Lock and lease nodes this process has on the server now.");
  w.sample("zklock_nodes", {}, number(s.nodes));
  w.family("zklock_watches", "gauge", "Watches this process has set and not seen fire.");
  w.sample("zklock_watches", {}, number(s.watches));
  w.family("zklock_hook_events_dropped_total", "counter",
           "Events an EventHook could not take (its queue was full, or it threw).");
  w.sample("zklock_hook_events_dropped_total", {}, number(s.hook_events_dropped));
  return w.take();
}

}  // namespace zklock
