// HoldAccess and MutexAccess: how the library's own code reaches the core behind the public Hold,
// Mutex and SharedMutex handles (internal).
#pragma once

#include <memory>
#include <utility>

#include "lock/mutex_core.h"
#include "zklock/hold.h"
#include "zklock/lock_request.h"
#include "zklock/mutex.h"
#include "zklock/shared_mutex.h"

namespace zklock::detail {

struct HoldAccess {
  static Hold make_hold(std::shared_ptr<MutexCore> core, std::shared_ptr<void> attempt,
                        Acquisition acquisition) {
    Hold hold;
    hold.core_ = std::move(core);
    hold.attempt_ = std::move(attempt);
    hold.acquisition_ = std::move(acquisition);
    return hold;
  }
  /// Releases `hold` and runs `released` once its node is deleted or the connection is down
  /// (MutexCore::release_hold_then); at once for an empty Hold.
  static void release_then(Hold& hold, std::function<void()> released) {
    if (!hold.core_) {
      released();
      return;
    }
    hold.core_->release_hold_then(hold.attempt_, std::move(released));
  }
};

struct MutexAccess {
  static MutexCore& core(const Mutex& m) noexcept { return *m.core_; }
  static MutexCore& core(const SharedMutex& m) noexcept { return *m.core_; }
};

}  // namespace zklock::detail
