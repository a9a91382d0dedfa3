#include "options.h"

#include <cstdio>
#include <utility>
#include <variant>

#include "duration.h"
#include "exit_codes.h"
#include "metrics_listener.h"
#include "zklock/errors.h"

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

}  // namespace

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

CLI::App* add_lock_path_command(CLI::App& app, const LockPathCommand& spec) {
  auto* command = app.add_subcommand(spec.name, spec.description);
  command->add_option("LOCK_PATH", *spec.path, "ZooKeeper path of the lock, e.g. /locks/backup")
      ->required();
  if (spec.lock != nullptr) add_lock_options(*command, *spec.lock);
  add_common_options(*command, *spec.common);
  command->footer(spec.details + kExitCodeHelp + spec.examples);
  return command;
}

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
  command
      .add_flag_callback(
          "--write", [&options] { options.mode = LockMode::kWrite; },
          "take the write side of a read/write lock: alone, after the readers and writers "
          "queued before it. Without --shared or --write: the exclusive lock (Mutex), which "
          "refuses a path that holds a read/write lock (exit 64)")
      ->excludes(shared)
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

std::unique_ptr<Session> open_session(const CommonOptions& options, const Console& console,
                                      std::vector<std::string> metrics_paths) {
  SessionOptions session_options;
  session_options.connect = options.connect;
  session_options.metrics_paths = std::move(metrics_paths);
  session_options.session_timeout = options.session_timeout;
  session_options.connect_timeout = options.connect_timeout;
  // Between Lost and the earliest moment the server can expire the session, zklock exec must
  // signal a command in another process: twice the library's default margin (T/20). Blips up to
  // T - T/20 (heartbeats) - T/10 - 150 ms (0.825 T at T = 6 s) are still survived
  // (docs/sessions.md).
  session_options.lost_margin = options.session_timeout / 10;
  if (!options.user.empty()) {
    const auto colon = options.user.find(':');
    session_options.credentials =
        DigestCredentials{options.user.substr(0, colon), options.user.substr(colon + 1)};
  }
  // The C client logs every failed connect attempt; zklock reports the outcome itself, so its
  // lines are only interesting when asked for.
  if (console.verbose()) {
    session_options.log_level = LogLevel::kWarn;
    session_options.log_sink = [&console](LogLevel, std::string_view line) {
      console.note("zookeeper client: " + std::string(line));
    };
  } else {
    session_options.log_level = LogLevel::kError;
    session_options.log_sink = [](LogLevel, std::string_view) {};
  }

  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(session_options);
  } catch (const ConnectionLossError&) {
    throw Failure(exit_code::kUnavailable, "no ZooKeeper server at " + options.connect +
                                               " answered within " +
                                               format_duration(options.connect_timeout));
  }
  console.note("connected to " + options.connect + " (session " +
               session_id_hex(session->session_id()) + ", timeout " +
               format_duration(session->negotiated_timeout()) + ")");
  return session;
}

std::string session_id_hex(std::int64_t session_id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx",
                static_cast<unsigned long long>(static_cast<std::uint64_t>(session_id)));
  return buf;
}

}  // namespace zklock::cli
