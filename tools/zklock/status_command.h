// `zklock status [options] [--json | --watch [--interval DURATION]] LOCK_PATH`: the lock's queue,
// holder first, then waiters - zklock's contenders and Apache Curator's and kazoo's on the same
// path. Once, or refreshed until interrupted (--watch: status_watch.h).
// Its options and its --help text are command_line.cpp's (the one file that includes CLI11).
#pragma once

#include <chrono>
#include <string>

#include "console.h"
#include "options.h"

namespace zklock::cli {

struct StatusOptions {
  std::string path;
  bool json = false;
  bool watch = false;                        // --watch: run_status_watch (status_watch.h)
  std::chrono::milliseconds interval{1000};  // --interval: between two reads of the queue
};

/// Runs `zklock status` without --watch: prints the queue (an absent path is an empty queue).
/// Returns 0. Throws: Failure, zklock::Error (main() turns them into exit codes).
int run_status(const StatusOptions& status, const CommonOptions& common, const Console& console);

}  // namespace zklock::cli
