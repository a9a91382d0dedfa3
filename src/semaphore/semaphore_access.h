// SemaphoreAccess: how the library's own code (LockSet) reaches the cores behind the public
// Semaphore and Lease handles (internal).
#pragma once

#include <memory>

#include "semaphore/semaphore_core.h"
#include "zklock/semaphore.h"

namespace zklock::detail {

struct SemaphoreAccess {
  static SemaphoreCore& core(const Semaphore& semaphore) noexcept { return *semaphore.core_; }
  /// Releases `lease` and waits, at most a third of the session timeout, until its delete was
  /// answered or the connection is down (as a failed acquire does: nothing of it is left behind
  /// when it reports). Does nothing for an empty Lease.
  static void release_and_wait(Lease& lease) noexcept;
  /// Releases `lease` and runs `released` once its delete was answered, the session ended or the
  /// connection is down: on the session's events thread (as HoldAccess::release_then), or at
  /// once, on this thread, for an empty Lease.
  static void release_then(Lease& lease, std::function<void()> released) noexcept;
};

}  // namespace zklock::detail
