// LockSet::Member: one member of a LockSet - a Mutex, either side of a SharedMutex, or leases of a
// Semaphore - and the calls the set makes on it, whatever it is (internal).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "lock/hold_access.h"
#include "lock/mutex_core.h"
#include "semaphore/semaphore_access.h"
#include "zklock/lock_set.h"

namespace zklock {

// What an asynchronous member request brought: a Hold (a lock member) or Leases (a semaphore's).
struct MemberTaken {
  Hold hold;
  std::vector<Lease> leases;
};
using MemberHandler = std::function<void(std::error_code error, MemberTaken taken)>;

struct LockSet::Member {
  enum class Kind { kMutex, kWrite, kRead, kSemaphore };
  Kind kind = Kind::kMutex;
  Mutex* mutex = nullptr;
  SharedMutex* shared = nullptr;
  Semaphore* semaphore = nullptr;
  int count = 1;              // a semaphore member's leases
  std::vector<Lease> leases;  // a semaphore member's, while the (blocking) set holds them

  const std::string& path() const;
  /// The blocking take: `try_once` one attempt, else until `deadline` (none: for ever).
  /// Returns: false on timeout (or try_once missed). Throws: as the member's own call.
  bool take(std::optional<std::chrono::steady_clock::time_point> deadline, bool try_once);
  void release() noexcept;
  /// As release(), and returns once the node is deleted (or the connection is down): a set that
  /// failed leaves nothing of itself on the server when it reports.
  void release_and_wait() noexcept;
  LockState state() const noexcept;
  /// The session the member's requests go through.
  detail::SessionCore& session() const noexcept;
  /// Where a set whose first member this is counts (the figures of its first member's session).
  detail::LockMeter* set_meter() const;
  /// What the blocking take holds now (one per lease for a semaphore member); none if not held.
  std::vector<Acquisition> acquisitions() const;
  /// The generation of what it holds (for how a hold ended), if held.
  std::optional<unsigned> generation() const;
  /// An asynchronous request of its own for the member.
  LockRequest async_take(MemberHandler handler, AsyncLockOptions options) const;
};

}  // namespace zklock
