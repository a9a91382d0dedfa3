// SemaphoreCore: the semaphore recipe behind zklock::Semaphore (internal). The layout and the
// recipe are described in zklock/semaphore.h and docs/recipe.md.
//
// Every acquisition is a LeaseRequest (lease_request.h), a state machine no thread waits in:
// acquire() starts one and sleeps until its outcome, async_acquire() hands the outcome to a
// handler. The core keeps what they share - the path, the count, the internal lock (a MutexCore on
// "<path>/locks": its queue, create recovery, cleanup and Lost rules are the Mutex's) - and the
// requests in flight, for cancel(), ~Semaphore and session changes.
//
// Threads: acquire() on the caller's thread; the requests' steps on the C client's threads and the
// session's monitor; on_session_change on the monitor. mutex_ guards the requests in flight.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lock/callback_gate.h"
#include "lock/mutex_core.h"
#include "semaphore/lease_core.h"
#include "semaphore/lease_request.h"
#include "session/session_core.h"
#include "zklock/acquisition.h"
#include "zklock/lock_request.h"
#include "zklock/semaphore_options.h"

namespace zklock::detail {

class SemaphoreCore final : public SessionObserver,
                            public std::enable_shared_from_this<SemaphoreCore> {
 public:
  using SteadyClock = std::chrono::steady_clock;
  using Leases = LeaseRequest::Leases;
  /// An asynchronous acquisition's outcome, on the session's event thread (or the executor).
  using LeasesHandler = std::function<void(std::error_code error, Leases leases)>;

  SemaphoreCore(std::shared_ptr<SessionCore> session, std::string path, int max_leases,
                SemaphoreOptions options);
  ~SemaphoreCore() override;

  void attach();
  /// Cancels every request (blocking calls throw CancelledError, asynchronous ones end with
  /// Errc::cancelled), waits for the blocking calls to leave, closes the internal lock and the
  /// callback gate, unregisters. Leases handed out stay held.
  void shutdown() noexcept;

  /// Blocks until `count` leases are ours, or until `deadline` (none: for ever); `try_once`: one
  /// attempt. All or none: the internal lock is held until all are taken, and those taken are
  /// given back when the rest cannot be.
  /// Returns: the leases, or none on timeout, on cancel() when `throw_on_cancel` is false, or when
  ///   `try_once` found too few free. Throws: as Semaphore::acquire().
  Leases acquire(std::optional<SteadyClock::time_point> deadline, bool try_once,
                 bool throw_on_cancel, int count = 1);
  /// Starts an asynchronous acquisition of `count` leases (Semaphore::async_acquire).
  LockRequest async_acquire(int count, AsyncLockOptions options, LeasesHandler handler);

  void cancel() noexcept;
  std::vector<std::string> leases() const;

  const std::string& path() const noexcept { return path_; }
  int max_leases() const noexcept { return max_leases_; }
  SessionCore& session() const noexcept { return *session_; }
  std::string context() const;

  void on_session_change() override;

 private:
  friend class LeaseRequest;
  struct InFlight {
    // Kept alive here until it ends: between its steps nothing else may hold it (its callbacks
    // for the internal lock, the watches and the deadline hold it weakly, and an asynchronous
    // request's caller may have dropped its handle).
    std::shared_ptr<LeaseRequest> request;
    bool blocking = false;  // an acquire() call: Semaphore::cancel() ends it
  };

  // A request ended (its last step, before its outcome is handed over): the figures, and it is
  // no longer in flight.
  void finished(const LeaseRequest& request, Errc code, bool contended,
                SteadyClock::time_point started, const Leases& leases);
  // The requests still in flight.
  std::vector<std::shared_ptr<LeaseRequest>> in_flight(bool blocking_only) const;

  const std::shared_ptr<SessionCore> session_;
  const std::string path_;
  const std::string leases_path_;
  const int max_leases_;
  const SemaphoreOptions options_;
  const std::string node_data_;
  const std::shared_ptr<MutexCore> lock_;  // the internal lock, on <path>/locks
  LockMeter* const meter_;                 // the figures of its acquisitions (null: none)
  const LeaseRevocation revocation_;       // how its leases hear of revocation requests

  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::vector<InFlight> requests_;
  bool shut_down_ = false;
  int callers_ = 0;  // blocking acquire() calls inside
};

}  // namespace zklock::detail
