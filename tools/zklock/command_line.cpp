// The command line's grammar - every command's options, its help and its checks - and the parse.
// The one file that includes CLI11: its header-only code costs seconds per file that includes
// it (three times as many under the sanitizers), so the rest of the CLI sees plain structs.
#include "command_line.h"

#include <CLI/CLI.hpp>
#include <cstring>
#include <ostream>
#include <utility>
#include <variant>
#include <vector>

#include "command_help.h"
#include "duration.h"
#include "exit_codes.h"
#include "metrics_listener.h"
#include "zklock/version.h"

namespace zklock::cli {
namespace {

CLI::Validator duration_validator(bool positive) {
  return CLI::Validator(
      [positive](std::string& text) -> std::string {
        auto parsed = parse_duration(text);
        if (auto* error = std::get_if<std::string>(&parsed)) return *error;
        if (positive && std::get<std::chrono::milliseconds>(parsed).count() == 0) {
          return "invalid duration '" + text + "': must be more than 0";
        }
        return {};
      },
      "");  // no description: the help shows the type name "DURATION" alone
}

// Adds a duration option (see duration.h) writing into `target`. `positive`: reject 0.
CLI::Option* add_duration_option(CLI::App& command, const std::string& name,
                                 std::chrono::milliseconds& target, const std::string& help,
                                 bool positive) {
  auto* option = command.add_option_function<std::string>(
      name,
      [&target](const std::string& text) {
        target = std::get<std::chrono::milliseconds>(parse_duration(text));
      },
      help);
  option->check(duration_validator(positive))->type_name("DURATION");
  return option;
}

// Adds --connect, --session-timeout, --connect-timeout, --user, the --tls-* options, --quiet,
// --verbose to `command`.
void add_common_options(CLI::App& command, CommonOptions& options) {
  const std::string group = "Connection";
  command
      .add_option("--connect", options.connect,
                  "ZooKeeper servers, host:port[,host:port...][/chroot]; without it, "
                  "$ZKLOCK_CONNECT, else the default")
      ->type_name("HOSTS")
      ->default_str(kDefaultConnect)
      ->group(group);
  add_duration_option(command, "--session-timeout", options.session_timeout,
                      "ZooKeeper session timeout: how long a silent client keeps its lock "
                      "(the server clamps it to its own limits)",
                      true)
      ->default_str(format_duration(options.session_timeout))
      ->group(group);
  add_duration_option(command, "--connect-timeout", options.connect_timeout,
                      "give up (exit 69) when no server answers within this time", true)
      ->default_str(format_duration(options.connect_timeout))
      ->group(group);
  command.add_option("--user", options.user, "digest authentication (ZooKeeper's addauth digest)")
      ->type_name("USER:PASSWORD")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const auto colon = text.find(':');
            if (colon == std::string::npos || colon == 0) return "expected USER:PASSWORD";
            return {};
          },
          ""))
      ->group(group);
  const std::string tls = "TLS (all three, or none: plain TCP)";
  command
      .add_option("--tls-ca", options.tls_ca,
                  "CA certificate (PEM) that verifies the servers; else $ZKLOCK_TLS_CA")
      ->type_name("FILE")
      ->group(tls);
  command
      .add_option("--tls-cert", options.tls_cert,
                  "this client's certificate (PEM); else $ZKLOCK_TLS_CERT")
      ->type_name("FILE")
      ->group(tls);
  command.add_option("--tls-key", options.tls_key, "its private key (PEM); else $ZKLOCK_TLS_KEY")
      ->type_name("FILE")
      ->group(tls);
  command
      .add_option("--tls-key-password", options.tls_key_password,
                  "the key's password, if it has one; prefer $ZKLOCK_TLS_KEY_PASSWORD (a command "
                  "line is visible to every user)")
      ->type_name("PASSWORD")
      ->group(tls);

  const std::string output = "Output";
  auto* quiet =
      command.add_flag("-q,--quiet", options.quiet, "print no messages (exit codes only)")
          ->group(output);
  command
      .add_flag("-v,--verbose", options.verbose,
                "report progress on stderr: connection, queue position, lock state")
      ->excludes(quiet)
      ->group(output);
}

// Adds --timeout, --description, --shared, --write, --lock-delay, --revocable and --metrics-listen
// to `command`.
void add_lock_options(CLI::App& command, LockOptions& options) {
  const std::string group = "Lock";
  command
      .add_option_function<std::string>(
          "--timeout",
          [&options](const std::string& text) {
            options.timeout = std::get<std::chrono::milliseconds>(parse_duration(text));
          },
          "give up waiting for the lock after this long (exit 75); 0 tries once. "
          "Default: wait as long as it takes")
      ->check(duration_validator(false))
      ->type_name("DURATION")
      ->group(group);
  command
      .add_option("--description", options.description,
                  "free text stored in the lock node, shown by `zklock status`")
      ->type_name("TEXT")
      ->group(group);
  auto* shared = command
                     .add_flag_callback(
                         "--shared", [&options] { options.mode = LockMode::kShared; },
                         "take the read side of a read/write lock (zklock SharedMutex, Curator "
                         "InterProcessReadWriteLock): readers hold it together, writers wait")
                     ->group(group);
  auto* write = command
                    .add_flag_callback(
                        "--write", [&options] { options.mode = LockMode::kWrite; },
                        "take the write side of a read/write lock: alone, after the readers and "
                        "writers queued before it. Without --shared or --write: the exclusive "
                        "lock (Mutex), which refuses a path that holds a read/write lock (exit 64)")
                    ->excludes(shared)
                    ->group(group);
  command
      .add_option_function<std::string>(
          "--lock-delay",
          [&options](const std::string& text) {
            options.lock_delay = std::get<std::chrono::milliseconds>(parse_duration(text));
          },
          "when the holder before us ended without releasing (killed, frozen past its session, "
          "its node deleted), wait this long before taking the lock, for resources that cannot "
          "check a fencing token. A clean release hands on at once (zklock's releases carry a "
          "mark; Curator's and kazoo's do not: after them the delay is waited). Exclusive lock "
          "only")
      ->check(duration_validator(false))
      ->type_name("DURATION")
      ->excludes(shared)
      ->excludes(write)
      ->group(group);
  command
      .add_flag("--revocable", options.revocable,
                "let others ask us to let go (`zklock revoke`, Curator's Revoker): on a request, "
                "exec stops the command (SIGTERM, then SIGKILL after --grace) and releases, "
                "passing its exit code through; hold releases and exits 0. Without it the lock "
                "node says it is not revocable and `zklock revoke` refuses")
      ->group(group);
  command
      .add_option("--metrics-listen", options.metrics_listen,
                  "serve zklock's figures (Prometheus text format) at http://HOST:PORT/metrics "
                  "while the command runs; port 0 takes a free one (shown with --verbose)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            auto parsed = parse_listen_address(text);
            auto* problem = std::get_if<std::string>(&parsed);
            return problem != nullptr ? *problem : std::string();
          },
          ""))
      ->type_name("HOST:PORT")
      ->group("Metrics");
}

// What a subcommand taking a LOCK_PATH is told by its caller: its name and texts, and where its
// options go (`lock`: the options of commands that take the lock; null for status).
struct LockPathCommand {
  std::string name;
  std::string description;
  std::string details;   // footer text, before the exit-code table
  std::string examples;  // footer text, after it
  std::string* path;
  CommonOptions* common;
  LockOptions* lock = nullptr;
};

// Adds the subcommand to `app`: its one positional argument LOCK_PATH, the lock options (if any)
// and the common ones, and its footer. The caller adds the command's own options.
CLI::App* add_lock_path_command(CLI::App& app, const LockPathCommand& spec) {
  auto* command = app.add_subcommand(spec.name, spec.description);
  command->add_option("LOCK_PATH", *spec.path, "ZooKeeper path of the lock, e.g. /locks/backup")
      ->required();
  if (spec.lock != nullptr) add_lock_options(*command, *spec.lock);
  add_common_options(*command, *spec.common);
  command->footer(spec.details + kExitCodeHelp + spec.examples);
  return command;
}

// `exec`, `elect`, `hold`, `status`, `revoke` and `leader`, each with its own options and the
// common ones (and the lock ones for those that take the lock). `exec` and `elect` share theirs
// (`spec` says which it is).
CLI::App* add_exec_command(CLI::App& app, const LockPathCommand& spec, ExecOptions& exec) {
  auto* command = add_lock_path_command(app, spec);
  command->add_option("COMMAND", exec.command_before_separator,
                      "after --: the program to run and its arguments (no shell; use "
                      "sh -c '...' for one)");
  command
      ->add_option_function<std::string>(
          "--on-lost", [&exec](const std::string& text) { exec.on_lost = *parse_on_lost(text); },
          "when the lock is lost while COMMAND runs: term (SIGTERM, then SIGKILL "
          "after --grace), kill (SIGKILL), ignore (let it finish; exit 76 anyway)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return parse_on_lost(text) ? "" : "expected term, kill or ignore, not '" + text + "'";
          },
          ""))
      ->type_name("term|kill|ignore")
      ->default_str(on_lost_name(exec.on_lost))
      ->group("Command");
  LockOptions& lock = *spec.lock;
  command
      ->add_option_function<std::string>(
          "--on-revoke",
          [&exec, &lock](const std::string& text) {
            exec.on_revoke = *parse_on_lost(text);
            lock.revocable = exec.on_revoke != OnLost::kIgnore;
          },
          "when someone asks us to let go (`zklock revoke`, Curator's Revoker): term (SIGTERM, "
          "then SIGKILL after --grace) or kill (SIGKILL), then release - the lock node says it "
          "is revocable; ignore: the node says it is not, and `zklock revoke` refuses (as "
          "without --revocable). --revocable alone is term")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return parse_on_lost(text) ? "" : "expected term, kill or ignore, not '" + text + "'";
          },
          ""))
      ->type_name("term|kill|ignore")
      ->excludes(command->get_option("--revocable"))
      ->group("Command");
  add_duration_option(*command, "--grace", exec.grace,
                      "with --on-lost=term or --on-revoke=term: time between SIGTERM and SIGKILL",
                      false)
      ->default_str(format_duration(exec.grace))
      ->group("Command");
  command
      ->add_flag("--foreground", exec.foreground,
                 "run COMMAND in zklock's process group, so that it can use the terminal "
                 "(interactive programs); signals then go to COMMAND alone, not to the "
                 "processes it starts")
      ->group("Command");
  return command;
}

CLI::App* add_elect_command(CLI::App& app, ExecOptions& exec, CommonOptions& common,
                            LockOptions& lock) {
  auto* command = add_exec_command(
      app,
      {"elect", "Campaign for leadership of the path, run COMMAND while leading, stop it on Lost",
       kElectFooter, kElectExamples, &exec.path, &common, &lock},
      exec);
  // A leader is one participant: the read side of a read/write lock would let several lead at
  // once, so an election takes only the exclusive lock.
  command->remove_option(command->get_option("--shared"));
  command->remove_option(command->get_option("--write"));
  auto* value = command
                    ->add_option("--value", lock.description,
                                 "this participant's value, stored in its node: what `zklock "
                                 "leader` and Election::leader() show (the same as --description)")
                    ->type_name("TEXT")
                    ->group("Election");
  value->excludes(command->get_option("--description"));
  command
      ->add_flag("--again", exec.again,
                 "campaign again each time COMMAND ends or is stopped (lost, revoked), at most "
                 "once a second, until zklock gets SIGINT, SIGTERM or SIGHUP")
      ->group("Election");
  return command;
}

CLI::App* add_leader_command(CLI::App& app, LeaderOptions& leader, CommonOptions& common) {
  auto* command =
      add_lock_path_command(app, {"leader", "Show who leads the election on the path",
                                  kLeaderFooter, kLeaderExamples, &leader.path, &common});
  command
      ->add_flag("--watch", leader.watch,
                 "print the leader now and again at every change, until interrupted")
      ->group("Output");
  return command;
}

CLI::App* add_hold_command(CLI::App& app, HoldOptions& hold, CommonOptions& common,
                           LockOptions& lock) {
  auto* command = add_lock_path_command(
      app, {"hold", "Take the lock, print its fencing token, hold it until SIGINT/SIGTERM",
            kHoldFooter, kHoldExamples, &hold.path, &common, &lock});
  command->add_flag("--json", hold.json, "print the acquisition as a JSON object")->group("Output");
  return command;
}

CLI::App* add_status_command(CLI::App& app, StatusOptions& status, CommonOptions& common) {
  auto* command = add_lock_path_command(
      app,
      {"status", "Show the lock's queue: the holder first, then the waiters, with who they are",
       kStatusFooter, kStatusExamples, &status.path, &common});
  auto* json_flag =
      command->add_flag("--json", status.json, "print one JSON document")->group("Output");
  auto* watch_flag = command
                         ->add_flag("--watch", status.watch,
                                    "show the queue again every --interval until interrupted")
                         ->excludes(json_flag)
                         ->group("Output");
  add_duration_option(*command, "--interval", status.interval,
                      "with --watch: how long between two reads of the queue", true)
      ->default_str(format_duration(status.interval))
      ->needs(watch_flag)
      ->group("Output");
  return command;
}

CLI::App* add_revoke_command(CLI::App& app, RevokeOptions& revoke, CommonOptions& common) {
  auto* command =
      add_lock_path_command(app, {"revoke", "Ask the holder of the lock to let go", kRevokeFooter,
                                  kRevokeExamples, &revoke.path, &common});
  command
      ->add_option("--node", revoke.node,
                   "ask this contender (its node's name under LOCK_PATH) instead of the holders")
      ->type_name("NAME")
      ->group("Revoke");
  return command;
}

ParseOutcome usage_error(std::ostream& err, const std::string& message) {
  err << "zklock: " << message << "\nRun with --help for more information.\n";
  return {std::nullopt, exit_code::kUsage};
}

// The checks of exec and elect (`name`) on what surrounds "--".
std::optional<std::string> exec_command_problem(const std::string& name, const ExecOptions& exec,
                                                const SplitArguments& arguments) {
  if (!exec.command_before_separator.empty()) {
    return name + ": put the command after --, e.g. zklock " + name + " " + exec.path + " -- " +
           exec.command_before_separator.front() + " ...";
  }
  if (arguments.rest.empty()) {
    return name + ": missing command: zklock " + name + " [options] " +
           (name == "elect" ? "ELECTION_PATH" : "LOCK_PATH") + " -- COMMAND [ARGS...]";
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
  CLI::App* exec_command = add_exec_command(
      app,
      {"exec", "Wait for the lock, run COMMAND while holding it, release it when COMMAND ends",
       kExecFooter, kExecExamples, &line.exec.path, &line.common, &line.lock},
      line.exec);
  CLI::App* hold_command = add_hold_command(app, line.hold, line.common, line.lock);
  CLI::App* status_command = add_status_command(app, line.status, line.common);
  CLI::App* revoke_command = add_revoke_command(app, line.revoke, line.common);
  CLI::App* elect_command = add_elect_command(app, line.exec, line.common, line.lock);
  CLI::App* leader_command = add_leader_command(app, line.leader, line.common);

  // zklock itself takes no option with a value: a first word that is not an option names the
  // command. (CLI11 would only say "A subcommand is required" for a misspelt one.)
  const auto is_command = [&](const char* word) {
    for (const CLI::App* command : {exec_command, hold_command, status_command, revoke_command,
                                    elect_command, leader_command}) {
      if (command->check_name(word)) return true;
    }
    return false;
  };
  if (arguments.argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    return usage_error(err, std::string("unknown command '") + argv[1] +
                                "': expected exec, hold, status, revoke, elect or leader");
  }
  try {
    app.parse(arguments.argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every real parse error is bad usage.
    const int code = app.exit(e, out, err);
    if (code != 0 && (exec_command->parsed() || elect_command->parsed()) && !arguments.separator) {
      err << "(zklock exec and elect take their command after --: zklock exec [OPTIONS] "
             "LOCK_PATH -- COMMAND [ARGS...])\n";
    }
    return {std::nullopt, code == 0 ? exit_code::kOk : exit_code::kUsage};
  }

  CLI::App* command = nullptr;
  if (exec_command->parsed() || elect_command->parsed()) {
    const bool elect = elect_command->parsed();
    if (const auto problem = exec_command_problem(elect ? "elect" : "exec", line.exec, arguments)) {
      return usage_error(err, *problem);
    }
    line.exec.command = arguments.rest;
    line.command = elect ? CommandLine::Command::kElect : CommandLine::Command::kExec;
    command = elect ? elect_command : exec_command;
  } else if (arguments.separator) {
    return usage_error(
        err, "unexpected arguments after --: only `zklock exec` and `zklock elect` run a command");
  } else if (leader_command->parsed()) {
    line.command = CommandLine::Command::kLeader;
    command = leader_command;
  } else if (hold_command->parsed()) {
    line.command = CommandLine::Command::kHold;
    command = hold_command;
  } else if (revoke_command->parsed()) {
    line.command = CommandLine::Command::kRevoke;
    command = revoke_command;
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
