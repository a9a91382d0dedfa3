// LockStateWatch: follows a held lock's state in a poll loop (exec's supervisor, hold's loop).
//
// Two things make the state change: events (a disconnect, our node deleted - the Mutex's
// on_state_change wakes the loop, see cli_mutex_options), and the clock (the library declares Lost
// when the session's Lost deadline passes, whether or not any event comes). So the loop polls
// with a timeout that ends at the Lost deadline, and asks check() whenever it wakes.
#pragma once

#include "console.h"
#include "lock_wait.h"
#include "zklock/session.h"

namespace zklock::cli {

class LockStateWatch {
 public:
  LockStateWatch(const LockHandle& mutex, const Session& session, const Console& console)
      : mutex_(mutex), session_(session), console_(console) {}

  /// Returns: the lock's state now. With --verbose, reports Suspended and the return to Held.
  LockState check();

  /// Returns: how long poll() may sleep before check() must run again even without an event
  /// (until just after the Lost deadline), in ms; -1 once Lost (final: nothing more to watch).
  int poll_timeout_ms() const;

 private:
  const LockHandle& mutex_;
  const Session& session_;
  const Console& console_;
  LockState last_ = LockState::kHeld;
};

}  // namespace zklock::cli
