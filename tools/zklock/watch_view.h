// What one refresh of `zklock status --watch` shows: a header (path, time, session state), then
// one row per contender in queue order. Pure text, no I/O: status_watch.cpp reads the queue and
// puts the text on the screen; the unit tests render made-up queues.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zklock/contender.h"
#include "zklock/session_state.h"

namespace zklock::cli {

/// One read of a lock path's queue.
struct QueueSnapshot {
  enum class Outcome {
    kRead,         // `contenders` is the queue (empty: the path exists, nobody queues)
    kPathMissing,  // the lock path does not exist (yet, or any more)
    kFailed,       // the read failed (e.g. connection loss): `failure` says why
  };
  Outcome outcome = Outcome::kRead;
  std::vector<Contender> contenders;  // queue order, holder(s) first
  /// Each contender's node creation time (server clock, ms since the epoch); nullopt when the node
  /// went away between the listing and its read. Same length as `contenders`.
  std::vector<std::optional<std::int64_t>> created_ms;
  std::string failure;
};

/// What the header says besides the queue.
struct WatchHeader {
  std::string path;
  std::chrono::system_clock::time_point now;  // also what the ages are measured against
  SessionState session_state = SessionState::kConnected;
  std::chrono::milliseconds interval{1000};
};

/// Returns: the refresh as lines, each ending in '\n':
///   /locks/x  2024-05-01 12:34:56  session Connected  every 1s
///   POS  ROLE     KIND       AGE    HOST  PID   DESCRIPTION
///   0    holder   exclusive  12.3s  web1  4242  "deploy by alice"
///   1    waiting  exclusive  4m05s  web2  977   "second"
///   2    waiting  exclusive  1.0s   -     -     data="worker-3"
/// AGE is `now` minus the node's creation (for a holder, its wait included). HOST, PID and
/// DESCRIPTION come from zklock's identity in the node ("-" when absent); other libraries' nodes
/// show their raw data, shortened. Instead of rows: "no contenders (the lock is free)", "path
/// does not exist", or "could not read the queue: ...". Text from the server is escaped so that
/// it cannot move the cursor or otherwise drive the terminal.
std::string render_watch_view(const WatchHeader& header, const QueueSnapshot& snapshot);

/// Returns: `text` with every control character (C0, DEL, and C1 as UTF-8) written as an escape
/// (\x1b, \u009b): what the server sends must not become a terminal escape sequence.
std::string terminal_safe(const std::string& text);

}  // namespace zklock::cli
