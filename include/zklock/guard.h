// zklock/guard.h: Guard, a scoped hold on a Mutex that also shows the lock's fencing token and
// its validity.
//
//   zklock::Guard guard(mutex);                 // blocks until held
//   store.write(data, guard.fencing_token());   // the resource refuses stale tokens
//   if (!guard.valid()) return;                 // Suspended or Lost: stop starting new work
//
// Like std::lock_guard it is neither copyable nor movable. The try and timed constructors may end
// up not owning the lock: check owns_lock().
#pragma once

#include <chrono>
#include <mutex>

#include "zklock/errors.h"
#include "zklock/mutex.h"

namespace zklock {

class Guard {
 public:
  /// Effects: mutex.lock(). Throws: as Mutex::lock().
  explicit Guard(Mutex& mutex) : mutex_(mutex), owns_(true) { mutex_.lock(); }
  /// Effects: mutex.try_lock().
  Guard(Mutex& mutex, std::try_to_lock_t) : mutex_(mutex), owns_(mutex.try_lock()) {}
  /// Effects: mutex.try_lock_for(timeout).
  template <class Rep, class Period>
  Guard(Mutex& mutex, const std::chrono::duration<Rep, Period>& timeout)
      : mutex_(mutex), owns_(mutex.try_lock_for(timeout)) {}

  /// Effects: unlock() if owned.
  ~Guard() {
    if (owns_) mutex_.unlock();
  }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

  bool owns_lock() const noexcept { return owns_; }
  explicit operator bool() const noexcept { return owns_; }

  /// Returns: the fencing token of this hold. Throws: Error(not_held) if this guard does not own
  ///   the lock (even if another thread holds the same Mutex).
  FencingToken fencing_token() const { return acquisition().token(); }
  /// Returns: what the hold took. Throws: Error(not_held) if this guard does not own the lock.
  Acquisition acquisition() const {
    if (!owns_) throw Error(Errc::not_held, "zklock::Guard: this guard does not own the lock");
    auto a = mutex_.acquisition();
    if (!a) throw Error(Errc::not_held, "zklock::Guard: lock not held");
    return *a;
  }
  /// Returns: the lock's state right now (NotHeld if not owned).
  LockState state() const noexcept { return owns_ ? mutex_.state() : LockState::kNotHeld; }
  /// Returns: true while the lock is surely held (state() == Held).
  bool valid() const noexcept { return state() == LockState::kHeld; }
  /// Throws: LockLostError unless state() is Held or Suspended.
  void throw_if_lost() const {
    const LockState s = state();
    if (s != LockState::kHeld && s != LockState::kSuspended)
      throw LockLostError("zklock::Guard: lock on " + mutex_.path() + " is " +
                          std::string(to_string(s)));
  }
  /// Effects: waits until the lock is lost or `timeout` passes. Returns: true if lost.
  bool wait_lost_for(std::chrono::milliseconds timeout) const {
    return mutex_.wait_lost_for(timeout);
  }

  Mutex& mutex() const noexcept { return mutex_; }

 private:
  Mutex& mutex_;
  bool owns_;
};

}  // namespace zklock
