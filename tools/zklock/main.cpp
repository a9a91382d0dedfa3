// zklock: flock(1) for a ZooKeeper cluster.
//
//   zklock exec [options] LOCK_PATH -- COMMAND [ARGS...]
//   zklock hold [options] LOCK_PATH
//   zklock status [options] [--json] LOCK_PATH
//
// main() parses the command line (CLI11), then runs one command and turns its outcome - a return
// value, or an exception - into the exit code documented in exit_codes.h.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "console.h"
#include "exec_command.h"
#include "exit_codes.h"
#include "hold_command.h"
#include "options.h"
#include "signals.h"
#include "status_command.h"
#include "zklock/errors.h"
#include "zklock/version.h"

namespace zklock::cli {
namespace {

constexpr const char* kDescription =
    "zklock: distributed locks on ZooKeeper - flock(1) for a cluster.\n"
    "Fair (first come, first served), compatible with Apache Curator's InterProcessMutex and\n"
    "kazoo's Lock on the same path, and safe: `exec` stops its command when the lock is lost.";

constexpr const char* kMainFooter =
    "Run `zklock COMMAND --help` for a command's options.\n"
    "\n"
    "Durations: a number and a unit - ms, s, m or h - e.g. 500ms, 10s, 1.5m, 2h.\n"
    "Servers: --connect, else $ZKLOCK_CONNECT, else 127.0.0.1:2181.\n"
    "\n";

constexpr const char* kMainExamples =
    "\n"
    "Examples:\n"
    "  zklock exec /locks/nightly-backup -- /usr/local/bin/backup --full\n"
    "  zklock exec --timeout 10s /locks/deploy -- sh -c 'make deploy && make smoke-test'\n"
    "  zklock hold --description \"db maintenance\" /locks/db\n"
    "  zklock status --json /locks/deploy\n";

// Everything after the first "--" is the command of `zklock exec`, verbatim: CLI11 never sees it
// (it would swallow a second "--" the command itself needs, as in `git log -- file`).
struct SplitArguments {
  int argc;                       // arguments before "--"
  bool separator = false;         // "--" was there
  std::vector<std::string> rest;  // after "--"
};

SplitArguments split_at_separator(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return {i, true, {argv + i + 1, argv + argc}};
  }
  return {argc, false, {}};
}

int usage_error(const std::string& message) {
  std::cerr << "zklock: " << message << "\nRun with --help for more information.\n";
  return exit_code::kUsage;
}

// Descriptors 0-2 must be open: otherwise zklock's first socket would become the command's stdin
// or stdout. Those the invoker closed are opened on /dev/null.
void ensure_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      const int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (opened >= 0 && opened != fd) {
        ::dup2(opened, fd);
        ::close(opened);
      }
    }
  }
}

int run(int argc, char** argv) {
  ensure_standard_descriptors();
  // Before zklock opens anything: these are the descriptors `exec` passes on to its command.
  const std::vector<int> inherited_descriptors = open_descriptors();
  const SplitArguments arguments = split_at_separator(argc, argv);

  CLI::App app(kDescription, "zklock");
  app.require_subcommand(1);
  app.set_version_flag("--version", ZKLOCK_VERSION_STRING);
  app.footer(std::string(kMainFooter) + kExitCodeHelp + kMainExamples);

  CommonOptions common;
  LockOptions lock;
  ExecOptions exec;
  HoldOptions hold;
  StatusOptions status;
  CLI::App* exec_command = add_exec_command(app, exec, common, lock);
  CLI::App* hold_command = add_hold_command(app, hold, common, lock);
  CLI::App* status_command = add_status_command(app, status, common);

  try {
    app.parse(arguments.argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every real parse error is bad usage.
    const int code = app.exit(e);
    if (code != 0 && exec_command->parsed() && !arguments.separator) {
      std::cerr << "(zklock exec takes its command after --: zklock exec [OPTIONS] LOCK_PATH -- "
                   "COMMAND [ARGS...])\n";
    }
    return code == 0 ? exit_code::kOk : exit_code::kUsage;
  }

  if (exec_command->parsed()) {
    if (!exec.command_before_separator.empty()) {
      return usage_error("exec: put the command after --, e.g. zklock exec " + exec.path + " -- " +
                         exec.command_before_separator.front() + " ...");
    }
    if (arguments.rest.empty()) {
      return usage_error(
          "exec: missing command: zklock exec [options] LOCK_PATH -- COMMAND [ARGS...]");
    }
    exec.command = arguments.rest;
  } else if (arguments.separator) {
    return usage_error("unexpected arguments after --: only `zklock exec` runs a command");
  }

  const Console console(common.verbosity());
  try {
    if (exec_command->parsed()) {
      SignalReader signals;  // before any thread exists (the Session starts them)
      return run_exec(exec, common, lock, console, signals, inherited_descriptors);
    }
    if (hold_command->parsed()) {
      SignalReader signals;
      return run_hold(hold, common, lock, console, signals);
    }
    if (status_command->parsed()) return run_status(status, common, console);
    return usage_error("no command given");
  } catch (const Failure& e) {
    console.error(e.what());
    return e.code();
  } catch (const InvalidArgumentError& e) {
    console.error(e.what());
    return exit_code::kUsage;
  } catch (const NotAuthorizedError& e) {
    console.error(e.what());
    return exit_code::kNoPermission;
  } catch (const ConnectionLossError& e) {
    console.error(std::string(e.what()) + " (ZooKeeper unreachable)");
    return exit_code::kUnavailable;
  } catch (const SessionLostError& e) {
    console.error(std::string(e.what()) + " (ZooKeeper session lost)");
    return exit_code::kUnavailable;
  } catch (const std::exception& e) {
    console.error(std::string("unexpected error: ") + e.what());
    return exit_code::kSoftware;
  }
}

}  // namespace
}  // namespace zklock::cli

int main(int argc, char** argv) { return zklock::cli::run(argc, argv); }
