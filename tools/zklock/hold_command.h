// `zklock hold [options] LOCK_PATH`: take the lock, print its token, hold it until SIGINT/SIGTERM.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "console.h"
#include "options.h"
#include "signals.h"

namespace zklock::cli {

struct HoldOptions {
  std::string path;
  bool json = false;
};

/// Adds the `hold` subcommand (with the common and lock options) to `app`.
CLI::App* add_hold_command(CLI::App& app, HoldOptions& hold, CommonOptions& common,
                           LockOptions& lock);

/// Runs `zklock hold`. Returns the exit code: 0 after releasing on SIGINT/SIGTERM/SIGHUP, 76 when
/// the lock was lost, 75 / 128+N when it was never acquired.
/// Throws: Failure, zklock::Error (main() turns them into exit codes).
int run_hold(const HoldOptions& hold, const CommonOptions& common, const LockOptions& lock,
             const Console& console, SignalReader& signals);

}  // namespace zklock::cli
