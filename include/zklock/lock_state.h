// zklock/lock_state.h: what a lock holder can know about its lock right now.
//
//   state      | meaning                                        | holder should
//   -----------+------------------------------------------------+------------------------------
//   NotHeld    | no acquisition (never taken, or released)      | -
//   Held       | our node is first and our session answers      | work
//   Suspended  | the session is Suspended: we may no longer     | start nothing irreversible;
//              | hold it (usually we still do)                  | wait for Held or Lost
//   Lost       | the session is Lost, or our node was deleted   | stop now; writes must carry the
//              | (seen by a watch, or by the next heartbeat     | fencing token
//              | that reads it): someone else may hold it       |
//
// Held -> Suspended -> Held | Lost. Lost is final for that acquisition: unlock() to clear it.
#pragma once

#include <ostream>
#include <string_view>

namespace zklock {

enum class LockState { kNotHeld, kHeld, kSuspended, kLost };

constexpr std::string_view to_string(LockState s) noexcept {
  switch (s) {
    case LockState::kNotHeld:
      return "NotHeld";
    case LockState::kHeld:
      return "Held";
    case LockState::kSuspended:
      return "Suspended";
    case LockState::kLost:
      return "Lost";
  }
  return "?";
}

inline std::ostream& operator<<(std::ostream& os, LockState s) { return os << to_string(s); }

}  // namespace zklock
