// zklock/session_options.h: how a Session connects and when it declares itself Suspended or Lost.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "zklock/fault_hook.h"
#include "zklock/log.h"

namespace zklock {

struct DigestCredentials {
  std::string user;
  std::string password;
};

struct SessionOptions {
  /// "host:port[,host:port...][/chroot]". Numeric hosts are best: the C client re-resolves names
  /// on every reconnect attempt.
  std::string connect = "127.0.0.1:2181";

  /// Requested session timeout T. The server clamps it to [2, 20] x its tickTime; the negotiated
  /// value is what the Lost rule uses (Session::negotiated_timeout()).
  std::chrono::milliseconds session_timeout{10'000};

  /// How long the constructor waits for the first connection (and how long a new session after
  /// Lost may take before its operations fail).
  std::chrono::milliseconds connect_timeout{15'000};

  /// Digest credentials (user:password), added to the session and re-added on reconnect.
  std::optional<DigestCredentials> credentials;

  /// The C client's log lines go here (default: stderr, prefixed "zklock: ").
  LogSink log_sink;
  LogLevel log_level = LogLevel::kWarn;

  /// Heartbeat interval i: zklock sends a cheap request of its own this often, so that the send time
  /// of the last answered request stays fresh (the C client's pings are invisible to it).
  /// Zero selects T / 10.
  std::chrono::milliseconds heartbeat_interval{0};

  /// Safety margin m for the Lost rule: Lost is declared when (send time of the last answered
  /// request) + T - m has passed without a newer answer. m absorbs clock-rate drift between this
  /// machine and the server and the time to tell listeners. Zero selects max(T / 20, 50 ms).
  /// With interval i and margin m, a network blip shorter than T - i - m keeps the session (and
  /// its locks); see docs/sessions.md for the arithmetic.
  std::chrono::milliseconds lost_margin{0};

  /// Suspended is declared when the C client reports a disconnect, or when no request has been
  /// answered for this long although one was outstanding. Zero selects T / 3.
  std::chrono::milliseconds suspend_after{0};

  /// Test seam: every request passes through this hook (see fault_hook.h). Null in production.
  std::shared_ptr<FaultHook> fault_hook;
};

}  // namespace zklock
