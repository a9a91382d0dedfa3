// zklock/log.h: where the ZooKeeper C client's log lines go.
//
// The C client logs from its own threads. zklock routes each Session's lines to that Session's
// LogSink (default: stderr) at the chosen level. DEBUG is deliberately not offered: the 3.8.0 C
// client has a use-after-free on thread exit at DEBUG level (ZOOKEEPER-4809).
#pragma once

#include <functional>
#include <string_view>

namespace zklock {

enum class LogLevel { kError = 1, kWarn = 2, kInfo = 3 };

/// Receives one log line (without trailing newline). Called from the C client's threads and from
/// the caller's thread; must be thread-safe and must not call back into the Session.
using LogSink = std::function<void(LogLevel level, std::string_view line)>;

}  // namespace zklock
