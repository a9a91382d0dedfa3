// zklock/lock_set.h: LockSet, several locks taken all or none; HoldSet, what its asynchronous
// form hands over.
//
// Two processes that need the same locks in different orders deadlock if each takes them in its
// own order. A LockSet takes its members in one canonical order - by lock path, byte by byte -
// whatever order they were added in, so any two sets over the same paths take them in the same
// order and cannot deadlock each other. One deadline covers the whole set; on any failure the
// members already taken are released (last taken first) and nothing of the attempt is left.
//
//   zklock::LockSet set;
//   set.add(orders).add(stock).add_shared(prices);   // Mutex, Mutex, SharedMutex (read side)
//   if (std::unique_lock all(set, std::chrono::seconds(5)); all.owns_lock()) {
//     for (const auto& a : set.acquisitions()) fence(a.token());  // a token per member
//     if (set.state() != zklock::LockState::kHeld) return;         // worst member's state
//   }
//
// Members are Mutex objects, SharedMutex objects (their write side, or with add_shared their read
// side) and Semaphore objects (one lease, or several, of each); they may belong to different
// Sessions. The set refers to them: they must outlive it. It takes them with their blocking API,
// so their thread rules apply (lock and unlock a LockSet on one thread); the asynchronous form
// (async_lock) takes a request of its own per member and hands the Holds and Leases over in a
// HoldSet, owned by whoever has it.
//
// A set is never handed out with a member that is already Lost: if a member is lost while the
// later ones are being taken, everything is released and the set is taken again (within the
// deadline). Once held, state() is the worst of its members': Lost if any is Lost.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <system_error>
#include <vector>

#include "zklock/acquisition.h"
#include "zklock/hold.h"
#include "zklock/lock_request.h"
#include "zklock/lock_state.h"
#include "zklock/mutex.h"
#include "zklock/semaphore.h"
#include "zklock/shared_mutex.h"

namespace zklock {

/// What an asynchronously taken LockSet holds: the Holds of its lock members and the Leases of its
/// semaphore members, each in the set's canonical order.
class HoldSet {
 public:
  HoldSet() noexcept = default;
  explicit HoldSet(std::vector<Hold> holds, std::vector<Lease> leases = {}) noexcept
      : holds_(std::move(holds)), leases_(std::move(leases)) {}
  /// Effects: unlock().
  ~HoldSet() { unlock(); }
  HoldSet(HoldSet&&) noexcept = default;
  HoldSet& operator=(HoldSet&& other) noexcept {
    unlock();
    holds_ = std::move(other.holds_);
    leases_ = std::move(other.leases_);
    return *this;
  }
  HoldSet(const HoldSet&) = delete;
  HoldSet& operator=(const HoldSet&) = delete;

  /// Returns: true while every member is held (state() is Held or Suspended).
  bool owns_lock() const noexcept {
    const LockState s = state();
    return s == LockState::kHeld || s == LockState::kSuspended;
  }
  /// Returns: the worst member state (Lost > Suspended > Held); NotHeld when empty or released.
  LockState state() const noexcept;
  /// Returns: each lock member's Hold (its acquisition and fencing token), in canonical order.
  const std::vector<Hold>& holds() const noexcept { return holds_; }
  /// Returns: the leases of the semaphore members, in canonical order (a member added with
  ///   several leases has as many here, in the order taken).
  const std::vector<Lease>& leases() const noexcept { return leases_; }
  /// Returns: what every Hold and Lease took, in the set's canonical order (by lock path).
  std::vector<Acquisition> acquisitions() const;
  /// Effects: releases every member, the last taken first. From any thread; never throws.
  void unlock() noexcept;

 private:
  std::vector<Hold> holds_;
  std::vector<Lease> leases_;
};

/// The completion handler of LockSet::async_lock: called exactly once, with the HoldSet, or with
/// an error (as LockHandler's) and an empty HoldSet.
using LockSetHandler = std::function<void(std::error_code error, HoldSet holds)>;

class LockSet {
 public:
  LockSet() = default;
  ~LockSet();
  LockSet(const LockSet&) = delete;
  LockSet& operator=(const LockSet&) = delete;

  /// Effects: adds `mutex` (exclusive) / the write side of `mutex` / the read side of `mutex`.
  /// Returns: *this.
  /// Throws: InvalidArgumentError if the set already has a member on the same lock path (it would
  ///   wait for itself), or is held.
  LockSet& add(Mutex& mutex);
  LockSet& add(SharedMutex& mutex);
  LockSet& add_shared(SharedMutex& mutex);
  /// Effects: adds `count` leases of `semaphore` (taken all or none with the rest of the set).
  /// Returns: *this.
  /// Throws: as add(), and InvalidArgumentError if count < 1 or count > max_leases().
  LockSet& add(Semaphore& semaphore, int count = 1);

  /// Effects: takes every member, in canonical order, each with its blocking lock call; waits as
  ///   long as it takes.
  /// Throws: whatever a member's lock call throws (Error(would_deadlock), CancelledError,
  ///   ClosedError, ...); the members already taken are released first.
  void lock();
  /// Effects: one attempt at each member (try_lock); all or none. Returns: true if all are held.
  ///   Throws: as lock(), except CancelledError (returns false).
  [[nodiscard]] bool try_lock();
  /// Effects: as lock(), with one overall deadline for the whole set (a member's wait gets what
  ///   is left of it). Returns: true if all are held; false on timeout or cancel (none held).
  ///   Throws: as try_lock().
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
    return lock_until(detail::deadline_after(timeout));
  }
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return lock_until(detail::deadline_at(deadline));
  }
  /// Effects: releases every member the set holds, the last taken first. Never throws.
  void unlock() noexcept;

  /// Returns: the worst member state while held (Lost if any member is Lost); NotHeld otherwise.
  LockState state() const noexcept;
  /// Returns: each member's acquisition, in canonical order (a semaphore member's leases, one
  ///   each). Throws: Error(not_held) if not held.
  std::vector<Acquisition> acquisitions() const;

  /// Effects: takes every member asynchronously, in canonical order, each with a request of its
  ///   own (not the members' blocking turn), within `options.deadline`; `handler` is called
  ///   exactly once with the HoldSet, or with the first error - the members already taken are
  ///   released first. The set's members must outlive the request.
  /// Returns: the handle that cancels the whole request.
  /// Throws: InvalidArgumentError if `handler` is empty or the set has no member.
  LockRequest async_lock(LockSetHandler handler, AsyncLockOptions options = {});

 private:
  struct Member;
  struct AsyncRun;
  bool lock_until(std::optional<std::chrono::steady_clock::time_point> deadline,
                  bool try_once = false);
  // lock_until() without the figures.
  bool take_members(std::optional<std::chrono::steady_clock::time_point> deadline, bool try_once);
  void check_new_path(const std::string& path) const;
  /// Adds `member` in canonical order (by path). Throws: as add().
  void insert(std::shared_ptr<Member> member);
  // unlock(), waiting for each member's node to go (a failed attempt leaves nothing when it
  // returns).
  void release_and_wait() noexcept;
  std::vector<std::shared_ptr<Member>> members_;        // kept in canonical order
  std::size_t held_ = 0;                                // members taken, from the front
  std::chrono::steady_clock::time_point held_since_{};  // when the whole set was taken
};

}  // namespace zklock
