// zklock's command line, parsed: which command to run, with which options. Parsing runs nothing
// (no session, no signal handling), so the tests parse argv with it directly.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "exec_command.h"
#include "hold_command.h"
#include "leader_command.h"
#include "options.h"
#include "revoke_command.h"
#include "status_command.h"

namespace zklock::cli {

struct CommandLine {
  enum class Command { kExec, kHold, kStatus, kRevoke, kElect, kLeader };
  Command command = Command::kStatus;
  CommonOptions common;
  LockOptions lock;  // exec and hold
  ExecOptions exec;  // exec and elect
  HoldOptions hold;
  StatusOptions status;
  RevokeOptions revoke;
  LeaderOptions leader;
};

/// A command line to run, or what to exit with instead.
struct ParseOutcome {
  std::optional<CommandLine> command_line;  // set: run it
  int exit_code = 0;  // otherwise: 0 after --help / --version, 64 (usage) after an error message
};

/// Parses `argv` (argv[0] is the program name). Everything after the first "--" is the command of
/// `zklock exec`, verbatim. `connect_from_environment` is $ZKLOCK_CONNECT (nullopt when unset or
/// empty): the servers are --connect, else it, else 127.0.0.1:2181. Help and version go to
/// `out`, usage errors to `err`. Durations, paths of the command line's own grammar and the
/// options' values are checked here; lock paths and connect strings by the library, later.
ParseOutcome parse_command_line(int argc, const char* const argv[],
                                const std::optional<std::string>& connect_from_environment,
                                std::ostream& out, std::ostream& err);

/// The servers to use: `flag` (--connect) when given, else `environment` ($ZKLOCK_CONNECT) when
/// set and not empty, else kDefaultConnect - the order README and `--help` promise.
std::string choose_connect(const std::optional<std::string>& flag,
                           const std::optional<std::string>& environment);

}  // namespace zklock::cli
