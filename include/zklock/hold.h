// zklock/hold.h: Hold, the owner of one asynchronously taken lock.
//
// An asynchronous acquisition (Mutex::async_lock, SharedMutex::async_lock_shared, ...) is not tied
// to a thread: the handler receives a Hold, and whoever has the Hold owns the lock. It may be
// moved across threads and released from any thread - unlock(), or destroying it. Its accessors
// answer for this one acquisition, from any thread, like Mutex's do for the blocking one.
//
//   mutex.async_lock([](std::error_code ec, zklock::Hold hold) {
//     if (ec) return;                       // timed out, cancelled, session lost, ...
//     write(data, hold.fencing_token());
//   });                                     // ~Hold: released
//
// A Hold must not outlive its Session. When its Mutex is destroyed first, the lock is released
// then and the Hold reports NotHeld.
#pragma once

#include <chrono>
#include <memory>

#include "zklock/acquisition.h"
#include "zklock/fenced_write.h"
#include "zklock/fencing_token.h"
#include "zklock/lock_state.h"

namespace zklock {

namespace detail {
class MutexCore;
struct HoldAccess;
}  // namespace detail

class Hold {
 public:
  /// An empty Hold: owns nothing (owns_lock() is false).
  Hold() noexcept = default;
  /// Effects: unlock().
  ~Hold();
  Hold(Hold&& other) noexcept = default;
  /// Effects: releases what this Hold owned, then takes `other`'s acquisition.
  Hold& operator=(Hold&& other) noexcept;
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

  /// Returns: true while the lock is held by this Hold (state() is Held or Suspended).
  bool owns_lock() const noexcept;
  explicit operator bool() const noexcept { return owns_lock(); }
  /// Returns: the state of this acquisition, computed at the call: NotHeld when empty or
  ///   released, Lost when its session ended (or its node was deleted).
  LockState state() const noexcept;
  /// Returns: what was taken. Throws: Error(not_held) for an empty Hold.
  const Acquisition& acquisition() const;
  /// Returns: acquisition().token(). Throws: Error(not_held) for an empty Hold.
  FencingToken fencing_token() const { return acquisition().token(); }
  /// Effects, Throws: as Mutex::commit_fenced(), fenced on this acquisition's node.
  void commit_fenced(const FencedWrite& writes) const;
  /// Effects: waits until this acquisition is Lost or released, or `timeout` passes.
  /// Returns: true if it is Lost or no longer held.
  bool wait_lost_for(std::chrono::milliseconds timeout) const;
  /// Effects: releases the lock (its node is deleted, as Mutex::unlock()), from any thread. Never
  ///   throws; does nothing if empty or already released.
  void unlock() noexcept;

 private:
  friend struct detail::HoldAccess;
  std::shared_ptr<detail::MutexCore> core_;
  std::shared_ptr<void> attempt_;  // the core's record of this acquisition (opaque here)
  Acquisition acquisition_;
};

}  // namespace zklock
