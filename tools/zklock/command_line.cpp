#include "command_line.h"

#include <CLI/CLI.hpp>
#include <cstring>
#include <ostream>
#include <vector>

#include "exit_codes.h"
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

SplitArguments split_at_separator(int argc, const char* const argv[]) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return {i, true, {argv + i + 1, argv + argc}};
  }
  return {argc, false, {}};
}

ParseOutcome usage_error(std::ostream& err, const std::string& message) {
  err << "zklock: " << message << "\nRun with --help for more information.\n";
  return {std::nullopt, exit_code::kUsage};
}

// The exec-specific checks on what surrounds "--".
std::optional<std::string> exec_command_problem(const ExecOptions& exec,
                                                const SplitArguments& arguments) {
  if (!exec.command_before_separator.empty()) {
    return "exec: put the command after --, e.g. zklock exec " + exec.path + " -- " +
           exec.command_before_separator.front() + " ...";
  }
  if (arguments.rest.empty()) {
    return std::string(
        "exec: missing command: zklock exec [options] LOCK_PATH -- COMMAND [ARGS...]");
  }
  return std::nullopt;
}

}  // namespace

std::string choose_connect(const std::optional<std::string>& flag,
                           const std::optional<std::string>& environment) {
  if (flag) return *flag;
  if (environment && !environment->empty()) return *environment;
  return kDefaultConnect;
}

ParseOutcome parse_command_line(int argc, const char* const argv[],
                                const std::optional<std::string>& connect_from_environment,
                                std::ostream& out, std::ostream& err) {
  const SplitArguments arguments = split_at_separator(argc, argv);

  CLI::App app(kDescription, "zklock");
  app.require_subcommand(1);
  app.set_version_flag("--version", ZKLOCK_VERSION_STRING);
  app.footer(std::string(kMainFooter) + kExitCodeHelp + kMainExamples);

  CommandLine line;
  CLI::App* exec_command = add_exec_command(app, line.exec, line.common, line.lock);
  CLI::App* hold_command = add_hold_command(app, line.hold, line.common, line.lock);
  CLI::App* status_command = add_status_command(app, line.status, line.common);

  // zklock itself takes no option with a value: a first word that is not an option names the
  // command. (CLI11 would only say "A subcommand is required" for a misspelt one.)
  const auto is_command = [&](const char* word) {
    for (const CLI::App* command : {exec_command, hold_command, status_command}) {
      if (command->check_name(word)) return true;
    }
    return false;
  };
  if (arguments.argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    return usage_error(
        err, std::string("unknown command '") + argv[1] + "': expected exec, hold or status");
  }
  try {
    app.parse(arguments.argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every real parse error is bad usage.
    const int code = app.exit(e, out, err);
    if (code != 0 && exec_command->parsed() && !arguments.separator) {
      err << "(zklock exec takes its command after --: zklock exec [OPTIONS] LOCK_PATH -- "
             "COMMAND [ARGS...])\n";
    }
    return {std::nullopt, code == 0 ? exit_code::kOk : exit_code::kUsage};
  }

  CLI::App* command = nullptr;
  if (exec_command->parsed()) {
    if (const auto problem = exec_command_problem(line.exec, arguments)) {
      return usage_error(err, *problem);
    }
    line.exec.command = arguments.rest;
    line.command = CommandLine::Command::kExec;
    command = exec_command;
  } else if (arguments.separator) {
    return usage_error(err, "unexpected arguments after --: only `zklock exec` runs a command");
  } else if (hold_command->parsed()) {
    line.command = CommandLine::Command::kHold;
    command = hold_command;
  } else {
    line.command = CommandLine::Command::kStatus;
    command = status_command;
  }
  // Only the command's own --connect counts: every command writes to the one CommonOptions.
  line.common.connect = choose_connect(
      command->count("--connect") > 0 ? std::optional(line.common.connect) : std::nullopt,
      connect_from_environment);
  return {std::move(line), exit_code::kOk};
}

}  // namespace zklock::cli
