// CliLock: the lock `zklock exec` and `zklock hold` take - a session of its own, the Mutex (or a
// side of a SharedMutex: --shared, --write), the wait for it - and its release, which leaves
// nothing of ours on the server when zklock exits.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "console.h"
#include "lock_wait.h"
#include "options.h"
#include "signals.h"
#include "wakeup.h"
#include "zklock/mutex.h"
#include "zklock/session.h"
#include "zklock/shared_mutex.h"

namespace zklock::cli {

class CliLock {
 public:
  /// Opens the session (open_session) and creates the Mutex (or SharedMutex, by `lock.mode`) for
  /// `path`; nothing is queued yet.
  /// Throws: what open_session and the Mutex constructor throw.
  CliLock(const std::string& path, const CommonOptions& common, const LockOptions& lock,
          const Console& console);
  ~CliLock() { release(); }
  CliLock(const CliLock&) = delete;
  CliLock& operator=(const CliLock&) = delete;

  /// Waits for the lock (wait_for_lock: --timeout, SIGINT/SIGTERM/SIGHUP on `signals`).
  /// Returns: nullopt once held; otherwise the exit code (75, 128 + N), reported, after release().
  std::optional<int> acquire(SignalReader& signals);

  /// Releases the lock (if held), then closes the session: closing deletes our ephemeral node at
  /// once even if the delete is still being retried, so the lock is surely free when zklock
  /// exits. Idempotent.
  void release();

  LockHandle& lock() { return *handle_; }
  const Session& session() const { return *session_; }
  /// Notified on every change of the held lock's state: poll it next to the signalfd.
  Wakeup& state_changed() { return state_changed_; }
  /// With --revocable: someone asked us to let go (state_changed() was notified).
  const std::atomic<bool>& revocation_requested() const { return revocation_requested_; }

 private:
  const std::string path_;
  const LockOptions& lock_;
  const Console& console_;
  Wakeup state_changed_;  // before the Session: its event thread may still notify until closed
  std::atomic<bool> revocation_requested_{false};  // the same
  std::unique_ptr<Session> session_;
  std::optional<Mutex> mutex_;
  std::optional<SharedMutex> shared_mutex_;
  std::optional<LockHandle> handle_;
};

}  // namespace zklock::cli
