// Exit codes of the zklock command-line tool: sysexits(3) where one fits, and the shell's own
// conventions (126, 127, 128 + signal) for the command that `zklock exec` runs.
#pragma once

#include <stdexcept>
#include <string>

namespace zklock::cli {

namespace exit_code {
inline constexpr int kOk = 0;
inline constexpr int kUsage = 64;           // EX_USAGE: bad path, bad duration, no command
inline constexpr int kNoHolder = 66;        // EX_NOINPUT: revoke: nobody (or no such node) to ask
inline constexpr int kUnavailable = 69;     // EX_UNAVAILABLE: ZooKeeper unreachable or gone
inline constexpr int kSoftware = 70;        // EX_SOFTWARE: an unexpected error
inline constexpr int kTimedOut = 75;        // EX_TEMPFAIL: --timeout passed without the lock
inline constexpr int kLockLost = 76;        // EX_PROTOCOL: the lock was lost while held
inline constexpr int kNoPermission = 77;    // EX_NOPERM: ACLs or credentials refused us
inline constexpr int kCannotExecute = 126;  // the command exists but could not be executed
inline constexpr int kNotFound = 127;       // the command was not found
inline constexpr int kSignalBase = 128;     // 128 + N: died of (or interrupted by) signal N
}  // namespace exit_code

/// The exit-code table shown in `--help` footers.
inline constexpr const char* kExitCodeHelp =
    "Exit codes:\n"
    "  0        success (exec: the command's own exit code is passed through)\n"
    "  64       bad usage: bad lock path (or, without --shared or --write, one that\n"
    "           holds a read/write lock), bad duration, missing command\n"
    "  66       revoke: nobody holds the lock (or no contender by --node's name)\n"
    "  69       ZooKeeper unreachable within --connect-timeout (or lost for good)\n"
    "  70       unexpected internal error\n"
    "  75       --timeout passed before the lock was acquired\n"
    "  76       the lock was lost while held (exec: the command was stopped)\n"
    "  77       not authorized (ACLs, --user); revoke: a holder that does not accept\n"
    "           revocation (zklock without --revocable)\n"
    "  126      exec: the command could not be executed (e.g. permission denied)\n"
    "  127      exec: the command was not found\n"
    "  128+N    exec: the command died of signal N; any command: interrupted by\n"
    "           signal N while waiting for the lock (130 SIGINT, 143 SIGTERM)\n";

/// Ends the running command with exit code `code()`; main() prints what() (unless --quiet).
class Failure : public std::runtime_error {
 public:
  Failure(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

}  // namespace zklock::cli
