// SemaphoreCore and LeaseCore: the semaphore recipe behind zklock::Semaphore and zklock::Lease
// (internal). The layout and the recipe are described in zklock/semaphore.h and docs/recipe.md.
//
// The internal lock is a MutexCore on "<path>/locks" (its queue, create recovery, cleanup and
// Lost rules are the Mutex's). The rest runs on the acquiring thread: it holds the internal lock
// while it creates its lease node and counts the leases, and sleeps on a condition variable while
// it waits for the leases' children watch; the watch, session changes, cancel() and the
// destructor wake it. Every step it sends is tied to one session generation: a new generation
// means our nodes are gone, and the attempt starts again from the internal lock.
//
// Threads: acquire() on the caller's thread; watch callbacks and completions on the C client's
// threads; on_session_change on the session's monitor thread. mutex_ guards everything mutable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lock/mutex_core.h"
#include "session/session_core.h"
#include "zklock/acquisition.h"
#include "zklock/lock_state.h"
#include "zklock/semaphore_options.h"

namespace zklock::detail {

/// One lease node, from the moment it is known to exist until its delete is answered (or its
/// session ended). Held leases double as heartbeat probes (a node deleted under us turns Lost).
class LeaseCore final : public SessionObserver, public std::enable_shared_from_this<LeaseCore> {
 public:
  using SteadyClock = std::chrono::steady_clock;

  LeaseCore(std::shared_ptr<SessionCore> session, Acquisition acquisition);
  ~LeaseCore() override;

  /// Registers with the session and as a heartbeat probe (needs shared_from_this).
  void attach();
  /// Deletes the node (once), retrying connection losses in the background while its session
  /// lives. Afterwards state() is NotHeld.
  void release() noexcept;
  /// Waits until the delete was answered, the session ended, or the connection is down (we never
  /// wait for a reconnect: the node goes with the session if it comes to that), at most `timeout`.
  void await_released(std::chrono::milliseconds timeout);

  LockState state() const noexcept;
  bool wait_lost_until(std::optional<SteadyClock::time_point> deadline) const;
  const Acquisition& acquisition() const noexcept { return acquisition_; }
  /// True once the node was seen missing (a watch or a heartbeat probe).
  bool deleted() const noexcept { return deleted_.load(); }
  /// Effects: from now on this lease is a hold counted in the session's figures (its end:
  ///   released or lost; timed from the Acquisition's acquired_at).
  void count_hold();

  void on_session_change() override;
  std::size_t nodes_on_server() const override;

 private:
  void delete_node(int attempt);
  void deleted_done();
  void on_missing();
  // With mutex_ held: counts the hold's end, once.
  void end_hold_locked();

  const std::shared_ptr<SessionCore> session_;
  const Acquisition acquisition_;
  std::atomic<bool> deleted_{false};

  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool released_ = false;
  bool delete_done_ = false;
  bool hold_open_ = false;  // count_hold() was called and the end is not counted yet
  SessionCore::ProbeId probe_ = 0;
};

class SemaphoreCore final : public SessionObserver,
                            public std::enable_shared_from_this<SemaphoreCore> {
 public:
  using SteadyClock = std::chrono::steady_clock;

  SemaphoreCore(std::shared_ptr<SessionCore> session, std::string path, int max_leases,
                SemaphoreOptions options);
  ~SemaphoreCore() override;

  void attach();
  /// Cancels waiters and waits for them to leave; closes the internal lock; unregisters.
  void shutdown() noexcept;

  /// Blocks until `count` leases are ours, or until `deadline` (none: for ever); `try_once`: one
  /// attempt. All or none: the internal lock is held until all are taken, and those taken are
  /// released when the rest cannot be (their deletes answered, or at most T/3 waited for).
  /// Returns: the leases, or none on timeout, on cancel() when `throw_on_cancel` is false, or when
  ///   `try_once` found too few free. Throws: as Semaphore::acquire().
  std::vector<std::shared_ptr<LeaseCore>> acquire(std::optional<SteadyClock::time_point> deadline,
                                                  bool try_once, bool throw_on_cancel,
                                                  int count = 1);

  void cancel() noexcept;
  std::vector<std::string> leases() const;

  const std::string& path() const noexcept { return path_; }
  int max_leases() const noexcept { return max_leases_; }
  std::string context() const;

  void on_session_change() override;

 private:
  struct Round;  // one attempt's lease phase (semaphore_core.cpp)
  enum class Outcome { kAcquired, kRequeue, kNotAcquired, kTimedOut, kCancelled };
  using Lock = std::unique_lock<std::mutex>;

  // acquire() without the figures; `contended`: set if it waited for a lease to be freed.
  std::vector<std::shared_ptr<LeaseCore>> take_leases(
      std::optional<SteadyClock::time_point> deadline, bool try_once, bool throw_on_cancel,
      int count, bool& contended);
  // One hold of the internal lock: up to `count` lease phases, stopping at the first that did
  // not acquire. Returns its outcome; `taken` has the leases of those that did.
  Outcome lease_phases(int count, std::optional<SteadyClock::time_point> deadline, bool try_once,
                       std::uint64_t epoch, std::vector<std::shared_ptr<LeaseCore>>& taken,
                       bool& contended);

  // The lease count stored with the path (semaphore_count.cpp). Returns: false if `deadline`
  // passed while no connection was up. Throws: LeaseCountMismatchError, ClosedError, Error.
  bool check_count(std::optional<SteadyClock::time_point> deadline);
  void create_ancestors(const std::string& path);

  // The internal lock; a cancel() reaches exactly the threads that entered acquire() before it
  // (semaphore_core.cpp).
  bool take_internal_lock(std::optional<SteadyClock::time_point> deadline, bool try_once,
                          std::uint64_t epoch);

  // The lease phase, holding the internal lock (semaphore_lease_phase.cpp).
  Outcome lease_phase(Round& round, std::optional<SteadyClock::time_point> deadline, bool try_once,
                      std::uint64_t epoch);
  Outcome gave_up_waiting(std::optional<SteadyClock::time_point> deadline,
                          std::uint64_t epoch) const;
  Errc create_lease_node(Round& round);
  Errc find_lost_create(Round& round, bool& found);
  Errc count_leases(Round& round, bool watched, std::vector<std::string>& children);
  void remove_watches(Round& round);

  /// A request on `connection`, waited for at most one session timeout (operation_timeout then).
  OpResult call(const std::shared_ptr<ClientConnection>& connection,
                const std::function<void(ClientConnection&, Completion)>& op) const;
  /// The connection of generation `generation` (none: any) once it is up; null if that
  /// generation ended, the session closed, `deadline` passed or (with `epoch`) a cancel came.
  std::shared_ptr<ClientConnection> await_connection(
      std::optional<unsigned> generation, std::optional<SteadyClock::time_point> deadline,
      std::optional<std::uint64_t> epoch = std::nullopt) const;
  bool cancelled_since(std::uint64_t epoch) const { return cancel_epoch_ != epoch || shut_down_; }

  const std::shared_ptr<SessionCore> session_;
  const std::string path_;
  const std::string leases_path_;
  const int max_leases_;
  const SemaphoreOptions options_;
  const std::string node_data_;
  const std::shared_ptr<MutexCore> lock_;  // the internal lock, on <path>/locks
  LockMeter* const meter_;                 // the figures of its acquisitions (null: none)

  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::uint64_t cancel_epoch_ = 0;
  bool shut_down_ = false;
  int callers_ = 0;
};

/// One pass of the lease phase: our lease node and the children watches of the leases listing.
struct SemaphoreCore::Round {
  unsigned generation = 0;
  std::shared_ptr<ClientConnection> connection;  // of `generation`
  std::string uuid;
  // Our lease node, once it is known to exist.
  std::string node_path;
  std::string node_name;
  std::int32_t sequence = 0;
  std::int64_t czxid = 0;
  std::int64_t session_id = 0;
  std::shared_ptr<LeaseCore> lease;  // on success
  bool contended = false;            // it waited for a lease to be freed
  // Children watches set on the leases path (guarded by SemaphoreCore::mutex_; the watch
  // callbacks hold it too). Each has a number of ours, known before it is set.
  struct Watches {
    unsigned next = 0;
    std::map<unsigned, std::uint64_t> set;  // ours -> the connection's watch id
    std::set<unsigned> fired;
  };
  std::shared_ptr<Watches> watches = std::make_shared<Watches>();
};

}  // namespace zklock::detail
