// zklock/log.h: where the ZooKeeper C client's log lines go.
//
// The C client logs from its own threads. zklock routes each Session's lines to that Session's
// LogSink (default: stderr) at the chosen level, with zklock's own lines:
//   kError  only what went wrong for good;
//   kWarn   (default) also one line in zklock's words when the session is Suspended, one when it
//           answers again, one when it is Lost, and one when the session's monitor was held up
//           for half the time to Suspended or more (by what: a task, a send, the machine), which
//           delays Suspended and Lost; a healthy start-up and a routine reconnect print
//           nothing. The C client's routine connection errors count as kInfo, and a line like one
//           shown in the last 10 s is held back (the next one says how many were);
//   kInfo   also zklock's line when a session first connects, and the C client's routine errors
//           (held back the same way);
//   kDebug  everything the C client writes at its INFO level (its warnings and routine lines
//           too), unfiltered, and zklock's forced reconnects. (The C client's own DEBUG level is
//           never enabled: the 3.8.0 client has a use-after-free on thread exit at that level,
//           ZOOKEEPER-4809.)
// Below kDebug the C client runs at its ERROR level. Its level is process-wide, and at WARN the
// 3.8 client reads a freed string when its server list is updated between two connection
// attempts (ZOOKEEPER-4699, fixed in 3.9.3; zklock updates the list to force reconnects and when
// a host name's addresses change): one Session at kDebug turns that window on for every Session
// in the process, so keep kDebug for diagnosis.
#pragma once

#include <functional>
#include <string_view>

namespace zklock {

enum class LogLevel { kError = 1, kWarn = 2, kInfo = 3, kDebug = 4 };

/// Receives one log line (without trailing newline). Called from the C client's threads and from
/// the caller's thread; must be thread-safe and must not call back into the Session.
using LogSink = std::function<void(LogLevel level, std::string_view line)>;

}  // namespace zklock
