// `zklock hold [options] LOCK_PATH`: take the lock, print its token, hold it until SIGINT/SIGTERM.
// Its options and its --help text are command_line.cpp's (the one file that includes CLI11).
#pragma once

#include <string>

#include "console.h"
#include "options.h"
#include "signals.h"

namespace zklock::cli {

struct HoldOptions {
  std::string path;
  bool json = false;
};

/// Runs `zklock hold`. Returns the exit code: 0 after releasing on SIGINT/SIGTERM/SIGHUP, 76 when
/// the lock was lost, 75 / 128+N when it was never acquired.
/// Throws: Failure, zklock::Error (main() turns them into exit codes).
int run_hold(const HoldOptions& hold, const CommonOptions& common, const LockOptions& lock,
             const Console& console, SignalReader& signals);

}  // namespace zklock::cli
