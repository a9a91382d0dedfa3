// Answer: one answered request as the Lost rule sees it (internal). Made by ClientConnection for
// every request the server answered, read by SessionCore and LeaderConfirmation.
#pragma once

#include <cstdint>

#include "boot_clock.h"
#include "zklock/errors.h"

namespace zklock::detail {

/// True when `rc` means the server answered the request (false: it never did, or we cannot know
/// that it did - a lost connection, a timeout, a closing or dead handle).
inline bool answered(Errc rc) noexcept {
  return rc != Errc::connection_loss && rc != Errc::operation_timeout && rc != Errc::closing &&
         rc != Errc::invalid_state && rc != Errc::session_expired;
}

struct Answer {
  unsigned generation = 0;
  std::uint64_t epoch = 0;     // connection epoch (ClientConnection::epoch()) it was answered on
  BootClock::time_point sent;  // when it was handed to the C client
  // When its answer was processed here: never earlier than the answer arrived, so "answered by
  // then" is always true of the real arrival.
  BootClock::time_point answered;
  bool via_leader = false;  // a write or a sync: the server forwards it to the leader
  Errc rc = Errc::ok;       // the server's answer
};

}  // namespace zklock::detail
