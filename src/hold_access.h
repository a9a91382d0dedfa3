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
  static LockRequest make_request(const std::shared_ptr<MutexCore>& core,
                                  const std::shared_ptr<void>& attempt) {
    LockRequest request;
    request.core_ = core;
    request.attempt_ = attempt;
    return request;
  }
};

}  // namespace zklock::detail
