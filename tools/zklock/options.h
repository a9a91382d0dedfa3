// Options shared by zklock's commands: how to reach ZooKeeper, how chatty to be, and - for the
// commands that take the lock - how long to wait and what to store in the lock node.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "console.h"
#include "zklock/session.h"

namespace zklock::cli {

inline constexpr const char* kDefaultConnect = "127.0.0.1:2181";
inline constexpr const char* kConnectEnv = "ZKLOCK_CONNECT";

struct CommonOptions {
  /// After parse_command_line (command_line.h): --connect, else $ZKLOCK_CONNECT, else the default.
  std::string connect = kDefaultConnect;
  std::chrono::milliseconds session_timeout{10'000};
  std::chrono::milliseconds connect_timeout{15'000};
  std::string user;  // "USER:PASSWORD" for digest auth; empty: none
  bool quiet = false;
  bool verbose = false;

  Verbosity verbosity() const noexcept {
    return quiet ? Verbosity::kQuiet : verbose ? Verbosity::kVerbose : Verbosity::kNormal;
  }
};

/// Which lock `exec` and `hold` take on the path.
enum class LockMode {
  kExclusive,  // default: a zklock::Mutex (Curator's InterProcessMutex, kazoo's Lock)
  kShared,     // --shared: the read side of a zklock::SharedMutex (readers share it)
  kWrite,      // --write: its write side (alone; Curator's and kazoo's read/write lock paths)
};

struct LockOptions {
  std::optional<std::chrono::milliseconds> timeout;  // none: wait as long as it takes
  std::string description;
  LockMode mode = LockMode::kExclusive;
  std::string metrics_listen;  // --metrics-listen HOST:PORT (metrics_listener.h); empty: none
};

/// What a subcommand taking a LOCK_PATH is told by its caller: its name and texts, and where its
/// options go (`lock`: the options of commands that take the lock; null for status).
struct LockPathCommand {
  std::string name;
  std::string description;
  std::string details;   // footer text, before the exit-code table
  std::string examples;  // footer text, after it
  std::string* path;
  CommonOptions* common;
  LockOptions* lock = nullptr;
};

/// Adds the subcommand to `app`: its one positional argument LOCK_PATH, the lock options (if any)
/// and the common ones, and its footer. The caller adds the command's own options.
CLI::App* add_lock_path_command(CLI::App& app, const LockPathCommand& command);

/// Adds --connect, --session-timeout, --connect-timeout, --user, --quiet, --verbose to `command`.
void add_common_options(CLI::App& command, CommonOptions& options);
/// Adds --timeout, --description, --shared, --write and --metrics-listen to `command`.
void add_lock_options(CLI::App& command, LockOptions& options);

/// Adds a duration option (see duration.h) writing into `target`. `positive`: reject 0.
CLI::Option* add_duration_option(CLI::App& command, const std::string& name,
                                 std::chrono::milliseconds& target, const std::string& help,
                                 bool positive);

/// Opens the ZooKeeper session. The C client's own log lines go to the console with --verbose
/// only (zklock reports failures itself). `metrics_paths`: the lock paths whose figures the
/// session keeps apart (SessionOptions::metrics_paths; --metrics-listen shows them).
/// Throws: Failure(69) when no server answered within the connect timeout; InvalidArgumentError
///   for a bad connect string.
std::unique_ptr<Session> open_session(const CommonOptions& options, const Console& console,
                                      std::vector<std::string> metrics_paths = {});

/// "0x" and the session id in lower-case hex, as ZooKeeper's own tools print it.
std::string session_id_hex(std::int64_t session_id);

}  // namespace zklock::cli
