// The value types of zklock/metrics.h: names, sums, process_metrics().
#include <algorithm>

#include "metrics/metrics_registry.h"
#include "zklock/metrics.h"

namespace zklock {

std::string_view to_string(Recipe recipe) noexcept {
  switch (recipe) {
    case Recipe::kMutex:
      return "mutex";
    case Recipe::kSharedRead:
      return "shared_read";
    case Recipe::kSharedWrite:
      return "shared_write";
    case Recipe::kSemaphore:
      return "semaphore";
    case Recipe::kLockSet:
      return "lock_set";
  }
  return "?";
}

std::string_view to_string(AcquireOutcome outcome) noexcept {
  switch (outcome) {
    case AcquireOutcome::kAcquired:
      return "acquired";
    case AcquireOutcome::kTimedOut:
      return "timed_out";
    case AcquireOutcome::kCancelled:
      return "cancelled";
    case AcquireOutcome::kSessionLost:
      return "session_lost";
    case AcquireOutcome::kError:
      return "error";
  }
  return "?";
}

std::string_view to_string(HoldEnd end) noexcept {
  switch (end) {
    case HoldEnd::kReleased:
      return "released";
    case HoldEnd::kSessionSilent:
      return "session_silent";
    case HoldEnd::kSessionExpired:
      return "session_expired";
    case HoldEnd::kNodeDeleted:
      return "node_deleted";
    case HoldEnd::kClosed:
      return "closed";
  }
  return "?";
}

std::string_view to_string(LostCause cause) noexcept {
  switch (cause) {
    case LostCause::kSilent:
      return "silent";
    case LostCause::kExpired:
      return "expired";
  }
  return "?";
}

void Histogram::merge(const Histogram& other) {
  if (other.counts.empty()) return;
  if (counts.empty()) {
    *this = other;
    return;
  }
  const std::size_t n = std::min(counts.size(), other.counts.size());
  for (std::size_t i = 0; i < n; ++i) counts[i] += other.counts[i];
  count += other.count;
  sum += other.sum;
}

void LockFigures::merge(const LockFigures& other) {
  for (std::size_t i = 0; i < acquisitions.size(); ++i) acquisitions[i] += other.acquisitions[i];
  for (std::size_t i = 0; i < hold_ends.size(); ++i) hold_ends[i] += other.hold_ends[i];
  contended += other.contended;
  wait.merge(other.wait);
  hold.merge(other.hold);
  queue_length.merge(other.queue_length);
}

std::uint64_t MetricsSnapshot::acquisitions(Recipe recipe, AcquireOutcome outcome) const {
  return total(recipe).acquisitions[static_cast<std::size_t>(outcome)];
}

LockFigures MetricsSnapshot::total(Recipe recipe) const {
  LockFigures sum;
  for (const auto& [key, figures] : locks) {
    if (key.first == recipe) sum.merge(figures);
  }
  return sum;
}

void MetricsSnapshot::merge(const MetricsSnapshot& other) {
  for (const auto& [key, figures] : other.locks) locks[key].merge(figures);
  sessions += other.sessions;
  generations += other.generations;
  for (std::size_t i = 0; i < sessions_lost.size(); ++i) sessions_lost[i] += other.sessions_lost[i];
  suspensions += other.suspensions;
  suspended.merge(other.suspended);
  forced_reconnects += other.forced_reconnects;
  heartbeat.merge(other.heartbeat);
  confirmation_lag_seconds = std::max(confirmation_lag_seconds, other.confirmation_lag_seconds);
  for (const auto& [op, n] : other.requests) requests[op] += n;
  for (const auto& [code, n] : other.errors) errors[code] += n;
  nodes += other.nodes;
  watches += other.watches;
  hook_events_dropped += other.hook_events_dropped;
}

MetricsSnapshot process_metrics() { return detail::MetricsRegistry::process(); }

}  // namespace zklock
