// Hold and LockRequest: the handles of an asynchronous acquisition; the work is MutexCore's.
#include "zklock/hold.h"

#include "lock/mutex_core.h"
#include "zklock/errors.h"
#include "zklock/lock_request.h"
#include "zklock/mutex.h"

namespace zklock {

Hold::~Hold() { unlock(); }

Hold& Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    unlock();
    core_ = std::move(other.core_);
    attempt_ = std::move(other.attempt_);
    acquisition_ = std::move(other.acquisition_);
  }
  return *this;
}

bool Hold::owns_lock() const noexcept {
  const LockState s = state();
  return s == LockState::kHeld || s == LockState::kSuspended;
}

LockState Hold::state() const noexcept {
  return core_ ? core_->hold_state(attempt_) : LockState::kNotHeld;
}

const Acquisition& Hold::acquisition() const {
  if (!core_) throw Error(Errc::not_held, "zklock::Hold: empty (owns no lock)");
  return acquisition_;
}

void Hold::commit_fenced(const FencedWrite& writes) const {
  if (!core_ || core_->hold_state(attempt_) == LockState::kNotHeld) {
    throw LockLostError("zklock::Hold::commit_fenced: lock not held; nothing written");
  }
  detail::commit_fenced(*core_, acquisition_, writes);
}

bool Hold::wait_lost_for(std::chrono::milliseconds timeout) const {
  if (!core_) return true;
  return core_->wait_hold_lost_until(attempt_, detail::deadline_after(timeout));
}

void Hold::unlock() noexcept {
  if (core_) core_->release_hold(attempt_);
}

}  // namespace zklock
