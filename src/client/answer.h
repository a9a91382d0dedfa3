// Answer: one answered request as the Lost rule sees it (internal). Made by ClientConnection for
// every request the server answered, read by SessionCore and LeaderConfirmation.
#pragma once

#include <cstdint>

#include "base/boot_clock.h"
#include "zklock/errors.h"

namespace zklock::detail {

/// True when `rc` means the server answered the request (false: it never did, or we cannot know
/// that it did - a lost connection, a timeout, a closing or dead handle).
///
/// A list of the codes only a server's reply carries, not a list of the C client's own failures:
/// a code this list does not know is not a sign of life. (It was the other way round, and a C
/// client built with OpenSSL fails every pending request with ZSSLCONNECTIONERROR, -15, when a TLS
/// handshake fails - a code no list of ours named: each failed handshake to a frozen server then
/// counted as an answer, and the session was never declared Lost. c_client.cpp now delivers it as
/// connection_loss, which this list does not name either.)
inline bool answered(Errc rc) noexcept {
  switch (rc) {
    case Errc::ok:
    case Errc::unimplemented:
    case Errc::new_config_no_quorum:
    case Errc::reconfig_in_progress:
    case Errc::no_node:
    case Errc::no_auth:
    case Errc::bad_version:
    case Errc::no_children_for_ephemerals:
    case Errc::node_exists:
    case Errc::not_empty:
    case Errc::invalid_acl:
    case Errc::session_moved:
    case Errc::not_readonly:
    case Errc::ephemeral_on_local_session:
    case Errc::throttled:
      return true;
    default:
      return false;
  }
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
