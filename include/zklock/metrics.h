// zklock/metrics.h: the figures zklock keeps about its locks and sessions, as plain values.
//
// Every Session keeps them from the moment it opens, unless SessionOptions::metrics is false:
// recording one acquisition costs a handful of relaxed atomic additions and no allocation, and
// nothing is sent to the server for it. Session::metrics() reads one session's; process_metrics()
// sums every Session of the process, including those already closed. to_prometheus()
// (zklock/prometheus.h) renders either in Prometheus' text format; docs/observability.md lists
// every figure.
//
//   zklock::Session session(options);
//   ...
//   const zklock::MetricsSnapshot m = session.metrics();
//   std::uint64_t timeouts = m.acquisitions(zklock::Recipe::kMutex, zklock::AcquireOutcome::kTimedOut);
//
// Per lock path figures exist only for the paths the application names in
// SessionOptions::metrics_paths; every other path is counted under the path "" (all others), so
// the number of series stays bounded whatever the application locks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zklock {

/// Which recipe an acquisition belongs to.
enum class Recipe { kMutex, kSharedRead, kSharedWrite, kSemaphore, kLockSet };
inline constexpr std::size_t kRecipeCount = 5;

/// How one acquisition (a lock(), try_lock_for(), async_lock(), acquire() ...) ended.
///   acquired     - it holds the lock;
///   timed_out    - its deadline passed first (a try_lock() that found the lock taken counts here:
///                  its deadline is now);
///   cancelled    - cancel(), a cancelled request, or the lock object destroyed while waiting;
///   session_lost - its session was lost or closed under it;
///   error        - any other error (refused by an ACL, a bad path, a foreign recipe on the path).
enum class AcquireOutcome { kAcquired, kTimedOut, kCancelled, kSessionLost, kError };
inline constexpr std::size_t kAcquireOutcomeCount = 5;

/// Why a hold ended.
///   released       - the application released it (unlock(), a Hold or Lease released);
///   session_silent - the session went silent past the Lost rule (the server may have expired it);
///   session_expired- the server said the session had expired;
///   node_deleted   - the lock node was deleted by someone else while held;
///   closed         - the Session was closed while it was held.
enum class HoldEnd { kReleased, kSessionSilent, kSessionExpired, kNodeDeleted, kClosed };
inline constexpr std::size_t kHoldEndCount = 5;

/// Why a session was lost (SessionStateEvent, the Lost counter): silent past the rule, or expired.
enum class LostCause { kSilent, kExpired };
inline constexpr std::size_t kLostCauseCount = 2;

std::string_view to_string(Recipe recipe) noexcept;
std::string_view to_string(AcquireOutcome outcome) noexcept;
std::string_view to_string(HoldEnd end) noexcept;
std::string_view to_string(LostCause cause) noexcept;

/// A histogram as Prometheus keeps one. `bounds` are the buckets' upper bounds in increasing
/// order (seconds, or a count for queue lengths); `counts[i]` is how many observations fell in
/// (bounds[i-1], bounds[i]], and the last element, one past `bounds`, those above every bound.
/// The counts are not cumulative; `count` is their sum, `sum` the sum of the observations.
struct Histogram {
  std::vector<double> bounds;
  std::vector<std::uint64_t> counts;
  std::uint64_t count = 0;
  double sum = 0;

  /// Effects: adds `other`'s observations (same bounds; a default-constructed one takes them).
  void merge(const Histogram& other);
};

/// The figures of one recipe on one lock path (or on every path not broken out).
struct LockFigures {
  std::array<std::uint64_t, kAcquireOutcomeCount> acquisitions{};  // by AcquireOutcome
  std::uint64_t contended = 0;  // acquisitions that had to wait behind another contender
  Histogram wait;               // seconds from the call to its outcome, every outcome included
  Histogram hold;               // seconds from acquired to the end of the hold, every HoldEnd
  Histogram queue_length;       // contenders in line (ours included) when it first queued
  std::array<std::uint64_t, kHoldEndCount> hold_ends{};  // by HoldEnd

  void merge(const LockFigures& other);
};

/// What Session::metrics() and process_metrics() return: a consistent-enough copy (each figure is
/// read atomically; figures recorded while the copy is made may be in some and not others).
struct MetricsSnapshot {
  /// Keyed by (recipe, lock path); path "" holds every path not in SessionOptions::metrics_paths.
  std::map<std::pair<Recipe, std::string>, LockFigures> locks;

  std::uint64_t sessions = 0;     // Session objects counted (live and closed)
  std::uint64_t generations = 0;  // ZooKeeper sessions opened (a new one after each Lost)
  std::array<std::uint64_t, kLostCauseCount> sessions_lost{};  // by LostCause
  std::uint64_t suspensions = 0;                               // Suspended episodes begun
  Histogram suspended;                                         // seconds each ended episode lasted
  std::uint64_t forced_reconnects = 0;
  Histogram heartbeat;                  // seconds from a heartbeat's send to its answer
  double confirmation_lag_seconds = 0;  // the leader-confirmation lag the Lost rule uses (max)
  std::map<std::string, std::uint64_t> requests;  // requests sent, by operation ("create", ...)
  std::map<std::string, std::uint64_t> errors;    // answers other than ok, by code ("no_node", ...)
  std::int64_t nodes = 0;    // lock and lease nodes this process has on the server now
  std::int64_t watches = 0;  // watches this process has set and not seen fire or removed
  std::uint64_t hook_events_dropped = 0;  // events an EventHook could not take (queue full)

  /// Returns: the count of acquisitions of `recipe` with `outcome`, over every path.
  std::uint64_t acquisitions(Recipe recipe, AcquireOutcome outcome) const;
  /// Returns: the figures of `recipe` summed over every path.
  LockFigures total(Recipe recipe) const;
  /// Effects: adds `other` (counters and histograms add; gauges add, except the lag: max).
  void merge(const MetricsSnapshot& other);
};

/// Returns: the figures of every Session this process has opened, summed (closed ones included).
MetricsSnapshot process_metrics();

}  // namespace zklock
