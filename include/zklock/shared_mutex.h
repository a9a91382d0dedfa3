// zklock/shared_mutex.h: SharedMutex, a fair distributed read/write lock on a ZooKeeper path.
//
// Readers share the lock, a writer holds it alone, and the queue is first come, first served
// between them: a reader waits only for the nearest writer ahead of it (and watches only that
// node), a writer waits for its direct predecessor of either kind. A reader never waits for a
// writer that came after it, and one release wakes only those who can now enter: a writer's
// release wakes the readers right behind it, the last of a group of readers wakes the writer.
//
// Node names are Apache Curator's InterProcessReadWriteLock's: "_c_<uuid>-__READ__<seq>" and
// "_c_<uuid>-__WRIT__<seq>", so Curator's read and write locks queue with ours on one path. kazoo's
// ReadLock ("__rlock__") and WriteLock ("__lock__", the name of its Lock too) are read as readers
// and writers; kazoo sees our nodes only if told their names (extra_lock_patterns). Exactly which
// combinations interoperate: docs/recipe.md. Nodes of an exclusive lock ("-lock-": zklock's Mutex,
// Curator's InterProcessMutex) on the path count as writers; zklock's Mutex in turn refuses a path
// that holds read/write nodes (Errc::incompatible_lock), since a reader would not see it.
//
// A SharedMutex object is one contender, like a Mutex: it holds one acquisition at a time, shared
// or exclusive. It is Lockable, TimedLockable, SharedLockable and SharedTimedLockable, so
// std::unique_lock, std::shared_lock (also with try_to_lock and timeouts) and std::lock work.
// Threads sharing one object take turns locally (FIFO), both for lock() and lock_shared(): for
// several readers of one process to hold at once, give each its own SharedMutex (one node each).
//
// Held is not forever: everything Mutex says about state(), Suspended and Lost, fencing tokens,
// commit_fenced() and ownership holds here for either mode.
#pragma once

#include <chrono>
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
#include "zklock/mutex.h"
#include "zklock/mutex_options.h"
#include "zklock/session.h"

namespace zklock {

class SharedMutex {
 public:
  /// Effects: validates `path`. Nothing is sent until the first lock attempt.
  /// Throws: InvalidArgumentError for a bad path (as Mutex).
  /// The Session must outlive the SharedMutex.
  SharedMutex(Session& session, std::string path, MutexOptions options = {});

  /// Effects: cancels lock calls still waiting, then releases a held lock (either mode).
  ~SharedMutex();

  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  // ---- exclusive (write) side ----------------------------------------------------------------

  /// Effects: blocks until this contender holds the lock alone: every contender ahead of it, reader
  ///   or writer, has gone. Loss while waiting re-queues, as Mutex::lock().
  /// Throws: Error(would_deadlock) if the calling thread holds this SharedMutex in either mode
  ///   (upgrading a shared lock is refused: it would wait for itself); otherwise as Mutex::lock().
  ///   Whatever the exit, no node of ours is left behind when it throws.
  void lock();
  /// Effects: one attempt at the exclusive lock. Returns: true if acquired. Throws: as lock(),
  ///   except CancelledError (returns false).
  [[nodiscard]] bool try_lock();
  /// Effects: as lock(), with an overall deadline (as Mutex::try_lock_for).
  /// Returns: true if acquired; false on timeout or cancel(). Throws: as try_lock().
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
    return try_lock_until_steady(false, detail::deadline_after(timeout));
  }
  /// Effects: as try_lock_for(deadline - Clock::now()).
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock_until_steady(false, detail::deadline_at(deadline));
  }
  /// Effects: releases the lock if it is held exclusively (else nothing). Never throws; as
  ///   Mutex::unlock().
  void unlock() noexcept;

  // ---- shared (read) side --------------------------------------------------------------------

  /// Effects: blocks until this contender holds the lock shared: no writer is ahead of it. Readers
  ///   ahead of it or behind it may hold at the same time.
  /// Throws: Error(would_deadlock) if the calling thread already holds this SharedMutex; otherwise
  ///   as lock().
  void lock_shared();
  /// Effects: one attempt at the shared lock. Returns: true if acquired. Throws: as lock_shared(),
  ///   except CancelledError (returns false).
  [[nodiscard]] bool try_lock_shared();
  /// Effects: as lock_shared(), with an overall deadline. Returns: true if acquired; false on
  ///   timeout or cancel(). Throws: as try_lock_shared().
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& timeout) {
    return try_lock_until_steady(true, detail::deadline_after(timeout));
  }
  /// Effects: as try_lock_shared_for(deadline - Clock::now()).
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_shared_until(
      const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock_until_steady(true, detail::deadline_at(deadline));
  }
  /// Effects: releases the lock if it is held shared (else nothing). Never throws.
  void unlock_shared() noexcept;

  // ---- both ----------------------------------------------------------------------------------

  /// Effects: turns the exclusive lock this object holds into a shared one without letting any
  ///   writer in between: a read node is created behind our write node, and if no other writer
  ///   queued between the two it is held at once and the write node is deleted (readers queued
  ///   between them then enter too). The new acquisition has its own node, sequence and fencing
  ///   token; release it with unlock_shared().
  /// Returns: true if now held shared; false if a writer had already queued behind our write node
  ///   (it would have to go first) or the lock is not surely held (Suspended or Lost): then the
  ///   exclusive lock is still held as before and nothing of the attempt is left behind.
  /// Throws: Error(not_held) if this object does not hold the exclusive lock; ClosedError,
  ///   NotAuthorizedError, Error as lock().
  [[nodiscard]] bool try_downgrade();

  /// Effects, Returns, Throws: as Mutex::async_lock() and Mutex::lock_future(), for the exclusive
  ///   lock (async_lock, lock_future) or the shared one (async_lock_shared, lock_shared_future).
  ///   The Hold's acquisition().shared tells which.
  LockRequest async_lock(LockHandler handler, AsyncLockOptions options = {});
  LockRequest async_lock_shared(LockHandler handler, AsyncLockOptions options = {});
  std::future<Hold> lock_future(AsyncLockOptions options = {});
  std::future<Hold> lock_shared_future(AsyncLockOptions options = {});

  /// Effects: wakes every blocking lock call waiting on this object at the time of the call (as
  ///   Mutex::cancel()); asynchronous requests are cancelled through their LockRequest.
  void cancel() noexcept;

  /// Returns: the state of the current acquisition, shared or exclusive (NotHeld if none).
  LockState state() const noexcept;
  /// Returns: true if held in either mode (state() is Held or Suspended).
  bool owns_lock() const noexcept;
  /// Returns: true if held shared (acquisition()->shared), false if exclusive or not held.
  bool owns_shared() const noexcept;

  /// Returns: what the current acquisition took (its `shared` tells the mode), or nullopt.
  std::optional<Acquisition> acquisition() const;
  /// Returns: the current acquisition's fencing token. Throws: Error(not_held) if not held.
  FencingToken fencing_token() const;
  /// Effects, Throws: as Mutex::commit_fenced(), fenced on the current acquisition's node (shared
  ///   or exclusive: readers that write, e.g. a cache fill, fence too).
  void commit_fenced(const FencedWrite& writes) const;
  /// Effects, Returns: as Mutex::wait_lost_for().
  bool wait_lost_for(std::chrono::milliseconds timeout) const;

  /// Returns: every contender on the path in queue order, readers and writers (Contender::kind),
  ///   of zklock, Curator and kazoo. Throws: as Session's basic operations.
  std::vector<Contender> contenders() const;

  const std::string& path() const noexcept;

 private:
  friend struct detail::MutexAccess;
  bool try_lock_until_steady(bool shared,
                             std::optional<std::chrono::steady_clock::time_point> deadline);
  std::shared_ptr<detail::MutexCore> core_;
};

}  // namespace zklock
