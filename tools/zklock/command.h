// The command `zklock exec` runs under the lock: found before the lock is taken, started with
// fork + execve (no shell), then signalled and reaped by the supervisor.
//
// zklock is multi-threaded (ZooKeeper's threads run while the command starts), so after fork the
// child does only async-signal-safe work: the program path, argv and envp are all built before.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "signals.h"

namespace zklock::cli {

/// Returns: the file descriptors open right now, sorted. Called at startup, before zklock opens
/// any, it names those the invoker passed on (stdin, stdout, stderr, and any other): the command
/// inherits exactly these, never zklock's own sockets and pipes.
std::vector<int> open_descriptors();

/// An environment variable zklock changed for itself, as the invoker had it (nullopt: not set).
struct InheritedVariable {
  std::string name;
  std::optional<std::string> value;
};

/// What the command inherits from zklock's invoker, taken before zklock opens or changes anything.
struct Inheritance {
  /// The descriptors open at startup (open_descriptors()); all others are closed.
  std::vector<int> descriptors;
  /// The variables zklock set for itself (tls_trust.h), restored for the command.
  std::vector<InheritedVariable> environment;
};

class RunningCommand;

class Command {
 public:
  /// Finds argv[0] as execvp(3) would: as given when it contains '/', else in $PATH.
  /// Throws: Failure(127) when it does not exist, Failure(126) when it exists but is not
  ///   executable - before any lock is taken.
  explicit Command(std::vector<std::string> argv);

  /// "argv[0] argv[1] ..." for messages.
  std::string display() const;

  struct StartOptions {
    /// Extra environment entries (name, value), replacing inherited ones of the same name.
    std::vector<std::pair<std::string, std::string>> environment;
    /// Run it in a process group of its own (signals reach every process it starts); false: in
    /// zklock's process group (it can use the terminal, which signals it directly).
    bool own_process_group = true;
    /// The invoker's descriptors and variables: zklock's environment with `inherited.environment`
    /// put back as the invoker had it, then `environment` added.
    Inheritance inherited;
  };

  /// Starts the command: a child that restores the signal state zklock inherited (`signals`),
  /// dies with zklock (PR_SET_PDEATHSIG: nobody else would stop it when the lock goes), and
  /// execs the program.
  /// Throws: Failure(127) / Failure(126) when the exec fails (ENOENT / anything else);
  ///   std::system_error when fork fails.
  RunningCommand start(const StartOptions& options, const SignalReader& signals) const;

 private:
  std::vector<std::string> argv_;
  std::string program_;  // resolved path
};

class RunningCommand {
 public:
  RunningCommand(pid_t pid, bool own_process_group) : pid_(pid), own_group_(own_process_group) {}

  pid_t pid() const noexcept { return pid_; }
  bool own_process_group() const noexcept { return own_group_; }

  /// Sends `sig` to the command: to its whole process group when it has its own, else to it.
  void signal(int sig) const noexcept;

  /// Reaps the command if it has exited (never blocks). Returns: its wait status once reaped
  /// (also on later calls).
  std::optional<int> try_reap();

  /// True while processes the command started remain in its process group after it exited
  /// (only meaningful with its own process group).
  bool group_has_members() const noexcept;

  /// The shell's convention for a wait status: the exit code, or 128 + N for death by signal N.
  static int exit_code_of(int wait_status) noexcept;

 private:
  pid_t pid_;
  bool own_group_;
  std::optional<int> status_;
};

}  // namespace zklock::cli
