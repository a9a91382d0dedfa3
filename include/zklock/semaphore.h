// zklock/semaphore.h: Semaphore, at most N holders of a ZooKeeper path at once; Lease, one hold.
//
// Layout (Apache Curator's InterProcessSemaphoreV2, so Curator's semaphore and ours count together
// on one path):
//   <path>          the semaphore node; its data is the lease count N in decimal ("3"), as
//                   python kazoo's Semaphore stores it
//   <path>/locks    an internal Mutex (zklock::Mutex / Curator's InterProcessMutex)
//   <path>/leases   one EPHEMERAL_SEQUENTIAL node per lease, "_c_<uuid>-lease-<seq>"
// Acquire: take the internal lock, create our lease node, list the leases (with a children watch
// once they are too many); while more than N exist, wait for the watch - still holding the internal
// lock - and list again; then release the internal lock. Only the internal lock's holder ever
// watches the leases, so a release wakes one waiter: no herd. The others wait in the internal
// lock's queue, each watching only its predecessor. docs/recipe.md has the argument and what
// interoperates with Curator and kazoo.
//
// Lease count: the first client writes N into <path>; a client constructed with another count (or
// finding data that is not a count) gets LeaseCountMismatchError from acquire, and leaves nothing
// behind. Curator's InterProcessSemaphoreV2 neither writes nor checks the count.
//
// Held is not forever, as for a Mutex: a Lease's state() is Held, Suspended (the session may be
// lost: start nothing irreversible) or Lost (the session is Lost - reported before the server can
// expire it, so before the lease can be handed on - or the lease node was deleted).
//
// Threads: a Semaphore may be used by any number of threads at once; each acquire() gets its own
// Lease (each call queues for the internal lock with a node of its own, FIFO). A Lease is a handle
// owned by one thread at a time, like a std::unique_ptr: release(), moves and destruction must not
// race with other uses of the same Lease; its const members may be called from any thread. A Lease
// may outlive its Semaphore (not its Session): it is released by its own destructor.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "zklock/acquisition.h"
#include "zklock/fencing_token.h"
#include "zklock/lock_request.h"
#include "zklock/lock_state.h"
#include "zklock/mutex.h"
#include "zklock/semaphore_options.h"
#include "zklock/session.h"

namespace zklock {

namespace detail {
class SemaphoreCore;
class LeaseCore;
struct SemaphoreAccess;
}  // namespace detail

/// One lease of a Semaphore, released on destruction. Movable, not copyable. A default-constructed
/// or moved-from Lease holds nothing (state() is NotHeld).
class Lease {
 public:
  Lease() noexcept = default;
  /// Effects: release().
  ~Lease();
  Lease(Lease&& other) noexcept = default;
  /// Effects: releases the lease this object held, then takes over `other`'s.
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  /// Effects: releases the lease: its node is deleted. Never throws and does not wait for the
  ///   server: a delete that fails on a connection loss is retried in the background (the node
  ///   would go with the session anyway). Afterwards state() is NotHeld. Does nothing if empty.
  void release() noexcept;

  /// Returns: Held, Suspended or Lost for a lease not yet released (computed at the call, as
  ///   Mutex::state()); NotHeld after release() and for an empty Lease.
  LockState state() const noexcept;
  /// Returns: true if state() is Held or Suspended.
  bool owns_lease() const noexcept;
  /// Returns: true unless the Lease is empty or released (its state may be Lost).
  explicit operator bool() const noexcept { return static_cast<bool>(core_); }

  /// Returns: what the lease took: lock_path is the semaphore path, node_path the lease node.
  /// Throws: Error(not_held) for an empty or released Lease.
  Acquisition acquisition() const;
  /// Returns: the czxid-based token of the lease node. With N > 1 several holders hold at once:
  ///   a token tells holders apart and orders their acquisitions, it does not make one exclusive.
  /// Throws: Error(not_held) for an empty or released Lease.
  FencingToken fencing_token() const { return acquisition().token(); }
  /// Effects: waits until the lease is Lost (or released), or `timeout` passes
  ///   (milliseconds::max(): no limit).
  /// Returns: true if it is Lost or not held.
  bool wait_lost_for(std::chrono::milliseconds timeout) const;

 private:
  friend class Semaphore;
  friend struct detail::SemaphoreAccess;
  explicit Lease(std::shared_ptr<detail::LeaseCore> core) noexcept : core_(std::move(core)) {}
  std::shared_ptr<detail::LeaseCore> core_;
};

/// The completion handler of Semaphore::async_acquire: called exactly once, with an empty error
/// code and the Lease, or with an error (as LockHandler's, lock_request.h) and an empty Lease.
using LeaseHandler = std::function<void(std::error_code error, Lease lease)>;
/// The same for async_acquire(count, ...): `count` leases, or none.
using LeasesHandler = std::function<void(std::error_code error, std::vector<Lease> leases)>;

class Semaphore {
 public:
  /// Effects: validates the arguments. Nothing is sent until the first acquire.
  /// Throws: InvalidArgumentError if max_leases < 1, or for a bad path (as Mutex).
  /// The Session must outlive the Semaphore and its Leases.
  Semaphore(Session& session, std::string path, int max_leases, SemaphoreOptions options = {});

  /// Effects: cancels acquire calls still waiting (they throw CancelledError, or return nullopt
  ///   from try_acquire_for, and have left the object when the destructor returns; nothing of
  ///   theirs is left behind) and asynchronous requests still pending (Errc::cancelled). Leases
  ///   already handed out stay held; revocation callbacks stop.
  ~Semaphore();

  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;

  /// Effects: checks (and if none is stored yet, stores) the lease count, then blocks until a
  ///   lease is ours. A session lost while waiting queues again in the next session; Suspended
  ///   keeps waiting. Never returns a lease that is already Lost.
  /// Returns: the lease (state() Held or Suspended).
  /// Throws: LeaseCountMismatchError if the path stores another count; CancelledError after
  ///   cancel() or when the Semaphore is destroyed meanwhile; ClosedError if the Session is
  ///   closed; NotAuthorizedError if ACLs refuse our nodes; Error(incompatible_lock) if
  ///   PATH/locks holds read/write lock nodes; Error for other failures. Whatever the exit, no
  ///   node or watch of ours is left behind when it throws.
  Lease acquire();

  /// Effects: one attempt: the internal lock only if it is free, then a lease only if fewer than
  ///   N are held. It can miss a free lease while another contender holds the internal lock (it
  ///   may be waiting for a lease, or about to take one): use try_acquire_for to wait briefly.
  /// Returns: the lease, or nullopt. Throws: as acquire(), except CancelledError (nullopt).
  std::optional<Lease> try_acquire();

  /// Effects: as acquire(), but gives up when `timeout` has passed (an overall deadline); a
  ///   timeout <= 0 acts as try_acquire(), a century or more (duration::max()) waits as acquire().
  ///   On giving up our nodes and watches are removed.
  /// Returns: the lease; nullopt on timeout or cancel(). Throws: as try_acquire().
  template <class Rep, class Period>
  std::optional<Lease> try_acquire_for(const std::chrono::duration<Rep, Period>& timeout) {
    return try_acquire_until_steady(detail::deadline_after(timeout));
  }
  /// Effects: as try_acquire_for(deadline - Clock::now()).
  template <class Clock, class Duration>
  std::optional<Lease> try_acquire_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_acquire_until_steady(detail::deadline_at(deadline));
  }

  /// Effects: as acquire(), for `count` leases at once (Curator's acquire(qty)): all or none.
  ///   Every lease of the call is taken under one hold of the internal lock, so no other zklock
  ///   contender takes a lease in between, and two calls that each want more than half of N
  ///   never hold part and wait for each other's rest (Curator releases the internal lock
  ///   between leases: such calls wait on each other until they time out). Like Curator's
  ///   single acquire, it waits for leases holding the internal lock, so contenders behind it
  ///   wait too; leases taken when the rest cannot be (cancel, an error) are released first.
  /// Returns: `count` leases, in the order taken.
  /// Throws: InvalidArgumentError if count < 1 or count > max_leases(); otherwise as acquire().
  std::vector<Lease> acquire(int count);

  /// Effects: as acquire(count), giving up when `timeout` has passed (one deadline for all of
  ///   them); a timeout <= 0 tries once. On giving up no lease of the call is held any more and
  ///   our nodes and watches are removed.
  /// Returns: `count` leases; nullopt on timeout or cancel(). Throws: as acquire(count), except
  ///   CancelledError (nullopt).
  template <class Rep, class Period>
  std::optional<std::vector<Lease>> try_acquire_for(
      int count, const std::chrono::duration<Rep, Period>& timeout) {
    return try_acquire_until_steady(count, detail::deadline_after(timeout));
  }

  /// Effects: queues an asynchronous acquisition with no thread waiting for it: its own node in
  ///   the internal lock's queue, then the lease phase, moved along by ZooKeeper's completions.
  ///   `handler` is called exactly once (on the session's event thread, or through
  ///   options.executor) with the Lease, or with an error and an empty Lease: Errc::timed_out
  ///   (options.deadline passed; a deadline already past makes one attempt, as try_acquire()),
  ///   Errc::cancelled (LockRequest::cancel(), or the Semaphore destroyed), Errc::session_lost
  ///   (it does not queue again by itself), Errc::closed, Errc::lease_count_mismatch,
  ///   Errc::no_auth, ... as acquire() would throw. Whatever the error, no node and no watch of
  ///   the request is left on the server when the handler runs (while the session is
  ///   connected; otherwise they go with the session). A Lease that never reaches its handler
  ///   (an executor that drops the work) is released.
  /// Returns: the handle that cancels the request (dropping it does not).
  /// Throws: InvalidArgumentError if `handler` is empty.
  LockRequest async_acquire(LeaseHandler handler, AsyncLockOptions options = {});
  /// Effects: as async_acquire(), for `count` leases at once, all or none (as acquire(count)).
  /// Throws: InvalidArgumentError if `handler` is empty, count < 1 or count > max_leases().
  LockRequest async_acquire(int count, LeasesHandler handler, AsyncLockOptions options = {});
  /// Effects: as async_acquire(), with the outcome in a future: the Lease, or the exception
  ///   acquire() would throw (Error(timed_out) for the deadline, CancelledError, ...).
  std::future<Lease> acquire_future(AsyncLockOptions options = {});
  /// Effects: as async_acquire(count, ...), with the outcome in a future.
  std::future<std::vector<Lease>> acquire_future(int count, AsyncLockOptions options = {});

  /// Effects: wakes every acquire call waiting on this object at the time of the call; they
  ///   remove their nodes and watches and fail (acquire: CancelledError; the try forms: nullopt).
  ///   Later calls are not affected, nor asynchronous requests (LockRequest::cancel() ends one).
  void cancel() noexcept;

  /// Returns: the names of the lease nodes now under PATH/leases (zklock's and Curator's), in
  ///   creation order; empty if there are none. Throws: as Session's basic operations.
  std::vector<std::string> leases() const;

  int max_leases() const noexcept;
  const std::string& path() const noexcept;

 private:
  std::optional<Lease> try_acquire_until_steady(
      std::optional<std::chrono::steady_clock::time_point> deadline);
  std::optional<std::vector<Lease>> try_acquire_until_steady(
      int count, std::optional<std::chrono::steady_clock::time_point> deadline);
  void check_lease_count(int count, const char* call) const;
  static std::vector<Lease> wrapped(std::vector<std::shared_ptr<detail::LeaseCore>> cores);
  friend struct detail::SemaphoreAccess;
  std::shared_ptr<detail::SemaphoreCore> core_;
};

}  // namespace zklock
