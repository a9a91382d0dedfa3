// zklock/session_state.h: the states a Session reports to its listeners.
//
//   state      | the session on the server          | what a lock holder should do
//   -----------+------------------------------------+-------------------------------------------
//   Connecting | not yet established (or a new one  | nothing held yet
//              | being opened after Lost)           |
//   Connected  | alive, answering                   | work
//   Suspended  | may still be alive: no answer for  | start nothing irreversible; the lock may
//              | a while, or the connection dropped | still be held and usually comes back
//   Lost       | expired, or silent so long that    | stop: the lock is not held. Reported no
//              | the server may have expired it     | later than the server can expire it
//   Closed     | closed by the application          | -
//
// Transitions: Connecting -> Connected <-> Suspended -> Lost -> Connecting (new session, generation
// + 1) -> ... ; any -> Closed. A session that never connects stays Connecting.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

namespace zklock {

enum class SessionState { kConnecting, kConnected, kSuspended, kLost, kClosed };

constexpr std::string_view to_string(SessionState s) noexcept {
  switch (s) {
    case SessionState::kConnecting:
      return "Connecting";
    case SessionState::kConnected:
      return "Connected";
    case SessionState::kSuspended:
      return "Suspended";
    case SessionState::kLost:
      return "Lost";
    case SessionState::kClosed:
      return "Closed";
  }
  return "?";
}

inline std::ostream& operator<<(std::ostream& os, SessionState s) { return os << to_string(s); }

/// One transition as listeners see it. `generation` counts ZooKeeper sessions opened by this
/// Session object (1 for the first); `session_id` is that session's id (0 before it is known).
struct SessionEvent {
  SessionState state;
  SessionState previous;
  unsigned generation;
  std::int64_t session_id;
};

}  // namespace zklock
