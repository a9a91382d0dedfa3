// Waiting for the lock in `zklock exec` and `zklock hold`: cancellable by SIGINT, SIGTERM and
// SIGHUP, bounded by --timeout, with the queue position reported under --verbose.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>

#include "console.h"
#include "options.h"
#include "signals.h"
#include "wakeup.h"
#include "zklock/mutex.h"
#include "zklock/shared_mutex.h"

namespace zklock::cli {

/// The lock the CLI takes: a Mutex, or one side (shared or exclusive) of a SharedMutex. Refers to
/// it; the lock must outlive the handle.
class LockHandle {
 public:
  explicit LockHandle(Mutex& mutex) : mutex_(&mutex) {}
  LockHandle(SharedMutex& mutex, bool shared) : shared_mutex_(&mutex), shared_(shared) {}

  void lock();
  [[nodiscard]] bool try_lock_for(std::chrono::milliseconds timeout);
  void unlock() noexcept;
  void cancel() noexcept;
  LockState state() const noexcept;
  std::optional<Acquisition> acquisition() const;
  const std::string& path() const noexcept;
  /// True for the read side of a SharedMutex.
  bool shared() const noexcept { return shared_; }

 private:
  Mutex* mutex_ = nullptr;
  SharedMutex* shared_mutex_ = nullptr;
  bool shared_ = false;
};

/// The MutexOptions of a lock the CLI takes: `lock.description` in the node; with --verbose, the
/// number of contenders ahead each time it changes; and `state_changed` notified on every change
/// of the held lock's state (Held, Suspended, Lost), so a poll loop wakes at once.
/// With --revocable, a revocation request sets `revocation_requested` and notifies
/// `state_changed` too. `console`, `state_changed` and `revocation_requested` must outlive the
/// Session the Mutex uses.
MutexOptions cli_mutex_options(const std::string& path, const LockOptions& lock,
                               const Console& console, Wakeup& state_changed,
                               std::atomic<bool>& revocation_requested);

struct WaitOutcome {
  enum class Result { kAcquired, kTimedOut, kInterrupted };
  Result result;
  int signal = 0;  // kInterrupted: the signal that interrupted the wait
};

/// Waits until `lock` is held, `timeout` (when given) has passed, or SIGINT, SIGTERM or SIGHUP
/// arrives on `signals`. On timeout or interruption nothing of ours is left in the queue (the
/// library deletes our node); a lock acquired at the moment a signal came is released again.
/// Throws: what Mutex::lock() throws, except CancelledError.
WaitOutcome wait_for_lock(LockHandle& lock, std::optional<std::chrono::milliseconds> timeout,
                          SignalReader& signals);

/// For an outcome other than kAcquired: reports it (unless --quiet) and returns the exit code,
/// 75 for a timeout, 128 + N for signal N.
int not_acquired(const WaitOutcome& outcome, const std::string& path, const LockOptions& lock,
                 const Console& console);

/// The name of a signal for messages ("SIGTERM").
std::string signal_name(int signal);

}  // namespace zklock::cli
