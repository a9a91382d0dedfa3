// `zklock exec [options] LOCK_PATH -- COMMAND [ARGS...]`: run a command while holding the lock,
// and stop it if the lock is lost.
// Its options and its --help text are command_line.cpp's (the one file that includes CLI11).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "command.h"
#include "console.h"
#include "options.h"
#include "signals.h"

namespace zklock::cli {

/// What `zklock exec` (and `elect`) does to the command when the lock is lost while it runs
/// (--on-lost), or when someone asks us to let go (--on-revoke).
enum class OnLost {
  kTerm,    // SIGTERM, then SIGKILL after --grace
  kKill,    // SIGKILL at once
  kIgnore,  // lost: let it finish (zklock still exits 76); revoke: not revocable at all
};

struct ExecOptions {
  std::string path;
  std::vector<std::string> command;  // from after "--" (main splits it off before parsing)
  std::vector<std::string> command_before_separator;  // a mistake: reported as a usage error
  OnLost on_lost = OnLost::kTerm;
  // --on-revoke (term and kill make the lock revocable: LockOptions::revocable); --revocable
  // alone is term.
  OnLost on_revoke = OnLost::kTerm;
  std::chrono::milliseconds grace{5000};
  bool foreground = false;
  bool again = false;  // elect --again: campaign again after the command ends or is stopped
};

/// --on-lost's value named `text` (term, kill, ignore); nullopt for any other text.
std::optional<OnLost> parse_on_lost(std::string_view text);
/// The --on-lost value that names `policy`.
std::string on_lost_name(OnLost policy);

/// Runs `zklock exec`. Returns the exit code (the command's own, or one of exit_codes.h).
/// Throws: Failure, zklock::Error (main() turns them into exit codes).
int run_exec(const ExecOptions& exec, const CommonOptions& common, const LockOptions& lock,
             const Console& console, SignalReader& signals, const Inheritance& inherited);

/// Runs `zklock elect`: run_exec() on the election path (the lock node's description is --value,
/// so `zklock leader` and Election::leader() show it). With --again, campaigns again each time the
/// command ends or is stopped (lost, revoked) - at most once a second - until zklock itself gets
/// SIGINT, SIGTERM or SIGHUP, or a campaign times out (--timeout).
/// Returns: the last run's exit code (as run_exec()), or 128 + N for a signal between runs.
int run_elect(const ExecOptions& exec, const CommonOptions& common, const LockOptions& lock,
              const Console& console, SignalReader& signals, const Inheritance& inherited);

}  // namespace zklock::cli
