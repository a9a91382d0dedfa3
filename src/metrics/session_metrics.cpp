#include "metrics/session_metrics.h"

#include <algorithm>
#include <utility>

#include "metrics/metrics_registry.h"

namespace zklock::detail {
namespace {

std::uint64_t nanoseconds_of(std::chrono::nanoseconds d) noexcept {
  return d.count() < 0 ? 0 : static_cast<std::uint64_t>(d.count());
}

constexpr double kNanosecondsPerSecond = 1e9;

}  // namespace

LockMeter::LockMeter(Recipe recipe, HookDispatcher* hook)
    : recipe_(recipe),
      hook_(hook),
      wait_(wait_bounds(), kNanosecondsPerSecond),
      hold_(wait_bounds(), kNanosecondsPerSecond),
      queue_length_(queue_bounds(), 1) {}

void LockMeter::acquire_ended(const std::string& path, AcquireOutcome outcome,
                              std::chrono::nanoseconds wait, bool contended,
                              std::int32_t sequence) {
  acquisitions_[static_cast<std::size_t>(outcome)].fetch_add(1, std::memory_order_relaxed);
  if (contended) contended_.fetch_add(1, std::memory_order_relaxed);
  wait_.observe(nanoseconds_of(wait));
  if (hook_) {
    hook_->post([event = AcquireEvent{recipe_, path, outcome, wait, contended, sequence}](
                    EventHook& hook) { hook.on_acquire(event); });
  }
}

void LockMeter::queued(std::size_t length) noexcept { queue_length_.observe(length); }

void LockMeter::hold_ended(const std::string& path, HoldEnd end, std::chrono::nanoseconds held) {
  hold_ends_[static_cast<std::size_t>(end)].fetch_add(1, std::memory_order_relaxed);
  hold_.observe(nanoseconds_of(held));
  if (hook_) {
    hook_->post([event = ReleaseEvent{recipe_, path, end, held}](EventHook& hook) {
      hook.on_release(event);
    });
  }
}

LockFigures LockMeter::snapshot() const {
  LockFigures f;
  for (std::size_t i = 0; i < kAcquireOutcomeCount; ++i) {
    f.acquisitions[i] = acquisitions_[i].load(std::memory_order_relaxed);
  }
  for (std::size_t i = 0; i < kHoldEndCount; ++i) {
    f.hold_ends[i] = hold_ends_[i].load(std::memory_order_relaxed);
  }
  f.contended = contended_.load(std::memory_order_relaxed);
  f.wait = wait_.snapshot();
  f.hold = hold_.snapshot();
  f.queue_length = queue_length_.snapshot();
  return f;
}

namespace {

std::vector<std::string> sorted_unique(std::vector<std::string> paths) {
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  // "" is the name of "all others": it cannot be broken out.
  paths.erase(std::remove(paths.begin(), paths.end(), std::string()), paths.end());
  return paths;
}

}  // namespace

SessionMetrics::SessionMetrics(std::vector<std::string> paths, std::shared_ptr<EventHook> hook,
                               std::size_t hook_queue)
    : paths_(sorted_unique(std::move(paths))),
      hook_(hook ? std::make_unique<HookDispatcher>(std::move(hook), hook_queue) : nullptr),
      suspended_(suspended_bounds(), kNanosecondsPerSecond),
      heartbeat_(latency_bounds(), kNanosecondsPerSecond) {
  meters_.reserve(kRecipeCount * (paths_.size() + 1));
  for (std::size_t r = 0; r < kRecipeCount; ++r) {
    for (std::size_t slot = 0; slot <= paths_.size(); ++slot) {
      meters_.push_back(std::make_unique<LockMeter>(static_cast<Recipe>(r), hook_.get()));
    }
  }
  MetricsRegistry::add(this);
}

SessionMetrics::~SessionMetrics() {
  MetricsRegistry::remove(this);
  hook_.reset();  // delivers what is queued, then joins the hook thread
}

LockMeter& SessionMetrics::meter(Recipe recipe, const std::string& path) {
  const auto it = std::lower_bound(paths_.begin(), paths_.end(), path);
  const std::size_t slot =
      it != paths_.end() && *it == path ? static_cast<std::size_t>(it - paths_.begin()) + 1 : 0;
  return *meters_[static_cast<std::size_t>(recipe) * (paths_.size() + 1) + slot];
}

void SessionMetrics::generation_opened() noexcept {
  generations_.fetch_add(1, std::memory_order_relaxed);
}

void SessionMetrics::state_changed(const SessionEvent& event, LostCause cause) {
  const auto now = std::chrono::steady_clock::now();
  const auto in_previous = now - state_since_;
  state_since_ = now;
  if (event.state == SessionState::kSuspended) suspensions_.fetch_add(1, std::memory_order_relaxed);
  if (event.previous == SessionState::kSuspended) suspended_.observe(nanoseconds_of(in_previous));
  if (event.state == SessionState::kLost) {
    lost_[static_cast<std::size_t>(cause)].fetch_add(1, std::memory_order_relaxed);
  }
  if (hook_) {
    hook_->post([e = SessionStateEvent{event, cause, in_previous}](EventHook& hook) {
      hook.on_session_state(e);
    });
  }
}

void SessionMetrics::forced_reconnect(unsigned generation, std::int64_t session_id) {
  forced_reconnects_.fetch_add(1, std::memory_order_relaxed);
  if (hook_) {
    hook_->post(
        [e = ReconnectEvent{generation, session_id}](EventHook& hook) { hook.on_reconnect(e); });
  }
}

void SessionMetrics::heartbeat_answered(std::chrono::nanoseconds round_trip) noexcept {
  heartbeat_.observe(nanoseconds_of(round_trip));
}

void SessionMetrics::set_gauge_source(GaugeSource source) {
  MetricsRegistry::set_gauge_source(*this, std::move(source));
}

MetricsSnapshot SessionMetrics::counters_snapshot() const {
  MetricsSnapshot s;
  s.sessions = 1;
  for (std::size_t r = 0; r < kRecipeCount; ++r) {
    for (std::size_t slot = 0; slot <= paths_.size(); ++slot) {
      LockFigures f = meters_[r * (paths_.size() + 1) + slot]->snapshot();
      const std::string& path = slot == 0 ? std::string() : paths_[slot - 1];
      s.locks[{static_cast<Recipe>(r), path}] = std::move(f);
    }
  }
  s.generations = generations_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kLostCauseCount; ++i) {
    s.sessions_lost[i] = lost_[i].load(std::memory_order_relaxed);
  }
  s.suspensions = suspensions_.load(std::memory_order_relaxed);
  s.suspended = suspended_.snapshot();
  s.forced_reconnects = forced_reconnects_.load(std::memory_order_relaxed);
  s.heartbeat = heartbeat_.snapshot();
  requests_.add_to(s.requests, s.errors);
  s.hook_events_dropped = hook_ ? hook_->dropped() : 0;
  return s;
}

MetricsSnapshot SessionMetrics::snapshot() const { return MetricsRegistry::snapshot_of(*this); }

}  // namespace zklock::detail
