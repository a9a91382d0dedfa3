// HoldAccess: how the core makes the public Hold and LockRequest handles (internal).
#pragma once

#include <memory>
#include <utility>

#include "zklock/hold.h"
#include "zklock/lock_request.h"

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
};

}  // namespace zklock::detail
