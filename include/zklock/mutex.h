// zklock/mutex.h: Mutex, a fair distributed lock on a ZooKeeper path.
//
// Acquire: create "<path>/_c_<uuid>-lock-" EPHEMERAL_SEQUENTIAL (Apache Curator's protected name,
// so Curator's InterProcessMutex - and kazoo's Lock with extra_lock_patterns=["-lock-"] - queue
// with us on one path), and list the children in the same round trip. The first in line holds the
// lock. Everyone else watches only its direct predecessor, with a read that sets the watch in the
// same call; when the predecessor goes, it looks again. One release wakes one waiter (no herd); the
// queue is first come, first served in the order the server created the nodes.
//
// A Mutex object is one contender. It is Lockable and TimedLockable, so std::lock_guard,
// std::unique_lock (also with try_to_lock and timeouts), std::scoped_lock(a, b) and std::lock work.
// Several threads may share one Mutex object: they take turns locally first (FIFO), then one node
// at a time queues in ZooKeeper. Two Mutex objects on one path exclude each other like two
// processes do.
//
// Held is not forever: while holding, check state() (or use on_state_change / wait_lost_for).
// Suspended means "may no longer hold", Lost means "does not hold" and is reported before the
// server can have expired our session - so before anyone else can be handed the lock. Writes to a
// shared resource should still carry fencing_token(): a process paused past its expiry cannot see
// anything until it runs again.
//
// Ownership: the lock belongs to the Mutex object, like a process's lock belongs to the process.
// The thread that locked it should unlock it (std::unique_lock does), but the accessors that
// describe the current acquisition - state(), owns_lock(), acquisition(), fencing_token(),
// commit_fenced(), wait_lost_for() - answer for the object, from any thread: a worker thread of the
// holding thread may read the token and write fenced. A Guard answers only for its own hold.
//
// Misuse: lock() by the thread that holds it throws (not reentrant); unlock() without holding does
// nothing; destroying a Mutex cancels lock() calls waiting on other threads (they throw
// CancelledError and have left the object when the destructor returns), then releases a held lock.
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zklock/acquisition.h"
#include "zklock/contender.h"
#include "zklock/fenced_write.h"
#include "zklock/fencing_token.h"
#include "zklock/hold.h"
#include "zklock/lock_request.h"
#include "zklock/lock_state.h"
#include "zklock/mutex_options.h"
#include "zklock/session.h"

namespace zklock {

namespace detail {
class MutexCore;
struct MutexAccess;

/// The steady deadline `timeout` from now; nullopt ("no deadline") for a timeout so long (a
/// century or more, duration::max() included) that now() + timeout would overflow.
template <class Rep, class Period>
std::optional<std::chrono::steady_clock::time_point> deadline_after(
    const std::chrono::duration<Rep, Period>& timeout) {
  using std::chrono::duration;
  if (duration<double>(timeout) >= duration<double>(std::chrono::hours(24 * 365 * 100))) {
    return std::nullopt;
  }
  if (timeout <= duration<Rep, Period>::zero()) return std::chrono::steady_clock::now();
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
}

/// The steady deadline for `deadline` of any clock (by the time left until it); nullopt as
/// deadline_after() for one so far away (time_point::max() included) that it means "none".
template <class Clock, class Duration>
std::optional<std::chrono::steady_clock::time_point> deadline_at(
    const std::chrono::time_point<Clock, Duration>& deadline) {
  using Seconds = std::chrono::duration<double>;
  return deadline_after(Seconds(deadline.time_since_epoch()) -
                        Seconds(Clock::now().time_since_epoch()));
}
}  // namespace detail

class Mutex {
 public:
  /// Effects: validates `path`. Nothing is sent until the first lock attempt.
  /// Throws: InvalidArgumentError for an empty or relative path, a trailing '/', "//", "." or ".."
  ///   segments, control characters (NUL included), or a path at or under /zookeeper.
  /// The Session must outlive the Mutex.
  Mutex(Session& session, std::string path, MutexOptions options = {});

  /// Effects: cancels lock() calls still waiting, then releases a held lock (unlock()).
  ~Mutex();

  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  /// Effects: blocks until this contender holds the lock. A session lost while waiting re-queues
  ///   in the new session (the place in line is lost). Suspended while waiting keeps waiting. Never
  ///   returns with a lock that is already Lost (its session ended, or its node was deleted
  ///   meanwhile): such an acquisition queues again.
  /// Throws: Error(incompatible_lock) when the lock path holds nodes of Curator's or kazoo's
  ///   read/write lock (their readers would not see this Mutex; nothing of ours is left behind);
  ///   Error(would_deadlock) if the calling thread holds this Mutex; CancelledError after
  ///   cancel() or when the Mutex is destroyed meanwhile; ClosedError if the Session is closed;
  ///   NotAuthorizedError if ACLs refuse our node. Whatever the exit, no node of ours is left
  ///   behind when lock() throws.
  void lock();

  /// Effects: one attempt: create, list, and keep the node only if it is first.
  /// Returns: true if acquired. Throws: as lock(), except CancelledError (returns false).
  [[nodiscard]] bool try_lock();

  /// Effects: as lock(), but gives up when `timeout` has passed (an overall deadline, not per
  /// wait);
  ///   a timeout <= 0 acts as try_lock(); a timeout of a century or more (duration::max()) waits as
  ///   long as lock() does. On giving up, our node and watch are removed.
  /// Returns: true if acquired; false on timeout or cancel().
  /// Throws: as lock(), except CancelledError after cancel().
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
    return try_lock_until_steady(detail::deadline_after(timeout));
  }
  /// Effects: as try_lock_for(deadline - Clock::now()); time_point::max() waits as lock() does.
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock_until_steady(detail::deadline_at(deadline));
  }

  /// Effects: releases the lock: our node is deleted. Never throws and does not wait for the
  ///   server: a delete that fails on a connection loss is retried in the background (the node
  ///   would go with the session anyway); other failures go to options.on_release_error.
  ///   Does nothing if not held.
  void unlock() noexcept;

  /// Effects: queues an asynchronous acquisition: a contender of its own (its own node, not the
  ///   object's blocking turn), moved along by ZooKeeper's completions, with no thread waiting.
  ///   `handler` is called exactly once - with the Hold that owns the lock, or with an error
  ///   (timed_out, cancelled, session_lost, closed, ...; see lock_request.h) and nothing left on
  ///   the server - on `options.executor`, or on the session's event thread. Never inline.
  ///   Destroying the Mutex cancels requests still pending (their handlers get Errc::cancelled,
  ///   possibly after the destructor returned: they must not touch the Mutex) and releases their
  ///   Holds' locks.
  /// Returns: the handle that cancels the request.
  /// Throws: InvalidArgumentError if `handler` is empty.
  LockRequest async_lock(LockHandler handler, AsyncLockOptions options = {});
  /// Effects: as async_lock(), with the outcome in a future: the Hold, or the exception the
  ///   blocking lock() would throw (Error(timed_out) for the deadline, CancelledError, ...).
  std::future<Hold> lock_future(AsyncLockOptions options = {});

  /// Effects: wakes every lock()/try_lock_for() waiting on this object at the time of the call;
  ///   they remove their nodes and fail (CancelledError / false). Later calls are not affected.
  void cancel() noexcept;

  /// Returns: the state of the current acquisition (NotHeld if none); computed at the call.
  LockState state() const noexcept;
  /// Returns: true if held (state() is Held or Suspended).
  bool owns_lock() const noexcept;

  /// Returns: what the current acquisition took, or nullopt if not held.
  std::optional<Acquisition> acquisition() const;
  /// Returns: the current acquisition's fencing token. Throws: Error(not_held) if not held.
  FencingToken fencing_token() const;

  /// Effects: applies `writes` in one ZooKeeper multi together with a check that our lock node
  ///   still exists: all of them, only if the lock is still ours on the server; else nothing.
  /// Throws (nothing was written): LockLostError if not held, held in an ended session, held in a
  ///   session that is Lost by the clock (state() is Lost: then nothing is sent), or the server
  ///   says the lock node is gone or the session expired. InvalidArgumentError for a bad path in
  ///   `writes`. Error with the failing operation's code (e.g. bad_version, node_exists).
  /// Throws (the outcome is unknown): ConnectionLossError when the multi was handed to the client
  ///   and its answer never came - the connection broke (connection_loss, operation_timeout), the
  ///   session was Lost or closed while it was on its way (session_lost, closed, closing): the
  ///   writes may or may not have been applied. Read back, or write idempotently.
  void commit_fenced(const FencedWrite& writes) const;

  /// Effects: waits until the current acquisition is Lost (or released), or `timeout` passes
  ///   (milliseconds::max(): no limit).
  /// Returns: true if it is Lost or no longer held.
  bool wait_lost_for(std::chrono::milliseconds timeout) const;

  /// Returns: every contender on this lock path in queue order (holder first) with its data -
  ///   zklock's, Curator's and kazoo's. Throws: as Session's basic operations.
  std::vector<Contender> contenders() const;

  const std::string& path() const noexcept;

 private:
  friend struct detail::MutexAccess;
  bool try_lock_until_steady(std::optional<std::chrono::steady_clock::time_point> deadline);
  std::shared_ptr<detail::MutexCore> core_;
};

}  // namespace zklock
