// worst(): how sure a set of holds is - as sure as its least sure member (internal).
#pragma once

#include "zklock/lock_state.h"

namespace zklock::detail {

// Lost > Suspended > Held > NotHeld (NotHeld: nothing to be sure of).
inline int badness(LockState s) noexcept {
  switch (s) {
    case LockState::kHeld:
      return 0;
    case LockState::kSuspended:
      return 1;
    case LockState::kLost:
      return 2;
    case LockState::kNotHeld:
      break;
  }
  return 3;
}

inline LockState worst(LockState a, LockState b) noexcept {
  return badness(a) >= badness(b) ? a : b;
}

}  // namespace zklock::detail
