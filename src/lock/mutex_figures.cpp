// MutexCore and the figures (zklock/metrics.h): which meter an acquisition counts in, its
// outcome, and each hold's start and end - counted once, whichever way it ends.
#include "lock/mutex_attempt.h"
#include "lock/mutex_core.h"

namespace zklock::detail {

LockMeter* MutexCore::meter_of(ContenderKind kind) const noexcept {
  switch (kind) {
    case ContenderKind::kExclusive:
      return exclusive_meter_;
    case ContenderKind::kRead:
      return read_meter_;
    case ContenderKind::kWrite:
      return write_meter_;
  }
  return nullptr;
}

AcquireOutcome MutexCore::outcome_of(Errc code) noexcept {
  switch (code) {
    case Errc::ok:
      return AcquireOutcome::kAcquired;
    case Errc::timed_out:
      return AcquireOutcome::kTimedOut;
    case Errc::cancelled:
      return AcquireOutcome::kCancelled;
    case Errc::closed:
    case Errc::session_lost:
    case Errc::session_expired:
      return AcquireOutcome::kSessionLost;
    default:
      return AcquireOutcome::kError;
  }
}

void MutexCore::record_acquire_locked(const AttemptPtr& a, AcquireOutcome outcome,
                                      SteadyClock::time_point started) {
  LockMeter* meter = meter_of(a->kind);
  if (!meter) return;
  meter->acquire_ended(path_, outcome, SteadyClock::now() - started, a->marked(Attempt::kContended),
                       outcome == AcquireOutcome::kAcquired ? a->sequence : 0);
}

void MutexCore::begin_hold_locked(const AttemptPtr& a) { a->mark(Attempt::kHoldOpen); }

void MutexCore::end_hold_locked(const AttemptPtr& a) {
  if (!a->marked(Attempt::kHoldOpen)) return;
  a->mark(Attempt::kHoldOpen, false);
  LockMeter* meter = meter_of(a->kind);
  // Where the hold's Acquisition is: a Hold's own, or the Mutex's (a blocking lock()'s). Neither:
  // it was never handed out, no hold to count.
  const Acquisition* acquisition = nullptr;
  if (a->async && a->async->acquisition) {
    acquisition = &*a->async->acquisition;
  } else if (a == held_ && acquisition_) {
    acquisition = &*acquisition_;
  }
  if (!meter || !acquisition) return;
  meter->hold_ended(path_, session_->hold_end_of(a->generation, a->self_deleted),
                    SteadyClock::now() - acquisition->acquired_at);
}

std::size_t MutexCore::nodes_on_server() const {
  std::lock_guard lock(mutex_);
  const unsigned generation = session_->generation();
  std::size_t n = 0;
  for (const auto& a : attempts_) {
    if (!a->node_path.empty() && a->phase != Attempt::Phase::kDone && a->generation == generation &&
        !a->self_deleted) {
      ++n;
    }
  }
  return n;
}

}  // namespace zklock::detail
