// zklock/log.h: where the ZooKeeper C client's log lines go.
//
// The C client logs from its own threads. zklock routes each Session's lines to that Session's
// LogSink (default: stderr) at the chosen level, with zklock's own lines:
//   kError  only what went wrong for good;
//   kWarn   (default) also one line in zklock's words when the session is Suspended, one when it
//           answers again, one when it is Lost; a healthy start-up and a routine reconnect print
//           nothing. The C client's routine connection lines count as kInfo, and a line like one
//           shown in the last 10 s is held back (the next one says how many were);
//   kInfo   also the C client's routine lines (held back the same way);
//   kDebug  everything the C client writes at its INFO level, unfiltered, and zklock's forced
//           reconnects. (The C client's own DEBUG level is never enabled: the 3.8.0 client has a
//           use-after-free on thread exit at that level, ZOOKEEPER-4809.)
#pragma once

#include <functional>
#include <string_view>

namespace zklock {

enum class LogLevel { kError = 1, kWarn = 2, kInfo = 3, kDebug = 4 };

/// Receives one log line (without trailing newline). Called from the C client's threads and from
/// the caller's thread; must be thread-safe and must not call back into the Session.
using LogSink = std::function<void(LogLevel level, std::string_view line)>;

}  // namespace zklock
