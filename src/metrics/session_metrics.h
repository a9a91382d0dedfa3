// SessionMetrics: the figures of one Session and its recipes (zklock/metrics.h), and the road to
// its EventHook (internal).
//
// Recording is lock-free: relaxed atomic additions into counters and fixed-bucket histograms that
// exist from the Session's construction on (a recipe looks up its LockMeter once, when it is
// made). With an EventHook, each record also posts the event to the hook thread
// (hook_dispatcher.h), which never makes the recorder wait.
//
// Every live SessionMetrics is in the process registry (process_metrics()); the last snapshot of
// one destroyed is kept there, so process figures count closed sessions too.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "metrics/histogram.h"
#include "metrics/hook_dispatcher.h"
#include "metrics/request_counters.h"
#include "zklock/event_hook.h"
#include "zklock/metrics.h"
#include "zklock/session_state.h"

namespace zklock::detail {

/// The figures of one recipe on one lock path (or on all the paths not broken out).
class LockMeter {
 public:
  LockMeter(Recipe recipe, HookDispatcher* hook);

  Recipe recipe() const noexcept { return recipe_; }

  /// An acquisition on `path` ended with `outcome` after waiting `wait`.
  void acquire_ended(const std::string& path, AcquireOutcome outcome, std::chrono::nanoseconds wait,
                     bool contended, std::int32_t sequence = 0);
  /// An acquisition first queued behind `length` - 1 others.
  void queued(std::size_t length) noexcept;
  /// A hold on `path` ended (`end`) after `held`.
  void hold_ended(const std::string& path, HoldEnd end, std::chrono::nanoseconds held);

  LockFigures snapshot() const;

 private:
  const Recipe recipe_;
  HookDispatcher* const hook_;  // null without an EventHook
  std::array<std::atomic<std::uint64_t>, kAcquireOutcomeCount> acquisitions_{};
  std::array<std::atomic<std::uint64_t>, kHoldEndCount> hold_ends_{};
  std::atomic<std::uint64_t> contended_{0};
  AtomicHistogram wait_;
  AtomicHistogram hold_;
  AtomicHistogram queue_length_;
};

class SessionMetrics {
 public:
  SessionMetrics(std::vector<std::string> paths, std::shared_ptr<EventHook> hook,
                 std::size_t hook_queue);
  ~SessionMetrics();
  SessionMetrics(const SessionMetrics&) = delete;
  SessionMetrics& operator=(const SessionMetrics&) = delete;

  /// Returns: the meter of `recipe` on `path` (the shared one of every path not broken out);
  ///   valid for the life of this object.
  LockMeter& meter(Recipe recipe, const std::string& path);

  // The session's own figures (SessionCore, with its mutex held: one caller at a time).
  void generation_opened() noexcept;
  /// A transition; `cause` counts when it is to Lost.
  void state_changed(const SessionEvent& event, LostCause cause);
  void forced_reconnect(unsigned generation, std::int64_t session_id);
  void heartbeat_answered(std::chrono::nanoseconds round_trip) noexcept;

  RequestCounters& requests() noexcept { return requests_; }
  /// Effects: delivers the hook's queued events and stops its thread (the Session's close()).
  void stop_hook() noexcept {
    if (hook_) hook_->stop();
  }

  /// The gauges (nodes, watches, confirmation lag) come from whoever owns the session: set once,
  /// before anything else sees this object, and cleared (under the registry's lock) before the
  /// owner goes.
  using GaugeSource = std::function<void(MetricsSnapshot&)>;
  void set_gauge_source(GaugeSource source);

  /// The figures now, gauges included.
  MetricsSnapshot snapshot() const;

 private:
  MetricsSnapshot counters_snapshot() const;
  HookDispatcher* hook() const noexcept { return hook_.get(); }

  const std::vector<std::string> paths_;  // sorted, unique; slot i + 1 (slot 0: all others)
  std::unique_ptr<HookDispatcher> hook_;
  std::vector<std::unique_ptr<LockMeter>> meters_;  // recipe * (paths_.size() + 1) + slot

  std::atomic<std::uint64_t> generations_{0};
  std::array<std::atomic<std::uint64_t>, kLostCauseCount> lost_{};
  std::atomic<std::uint64_t> suspensions_{0};
  std::atomic<std::uint64_t> forced_reconnects_{0};
  AtomicHistogram suspended_;
  AtomicHistogram heartbeat_;
  RequestCounters requests_;
  // When the state last changed (state_changed(), one caller at a time).
  std::chrono::steady_clock::time_point state_since_ = std::chrono::steady_clock::now();

  GaugeSource gauges_;  // guarded by the registry's lock (process_metrics.cpp)
  friend class MetricsRegistry;
};

}  // namespace zklock::detail
