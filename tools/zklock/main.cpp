// zklock: flock(1) for a ZooKeeper cluster.
//
//   zklock exec [options] LOCK_PATH -- COMMAND [ARGS...]
//   zklock hold [options] LOCK_PATH
//   zklock status [options] [--json | --watch [--interval DURATION]] LOCK_PATH
//   zklock revoke [options] [--node NAME] LOCK_PATH
//   zklock elect [options] [--value TEXT] [--again] ELECTION_PATH -- COMMAND [ARGS...]
//   zklock leader [options] [--watch] ELECTION_PATH
//
// main() parses the command line (command_line.h), then runs one command and turns its outcome -
// a return value, or an exception - into the exit code documented in exit_codes.h.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "command_line.h"
#include "console.h"
#include "exit_codes.h"
#include "signals.h"
#include "status_watch.h"
#include "tls_trust.h"
#include "zklock/errors.h"

namespace zklock::cli {
namespace {

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

std::optional<std::string> connect_from_environment() {
  const char* value = std::getenv(kConnectEnv);  // NOLINT(concurrency-mt-unsafe): one thread yet
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// Runs the parsed command. Returns its exit code; exceptions are main()'s to translate.
int run_command(const CommandLine& line, const Console& console, const Inheritance& inherited) {
  switch (line.command) {
    case CommandLine::Command::kExec: {
      SignalReader signals;  // before any thread exists (the Session starts them)
      return run_exec(line.exec, line.common, line.lock, console, signals, inherited);
    }
    case CommandLine::Command::kHold: {
      SignalReader signals;
      return run_hold(line.hold, line.common, line.lock, console, signals);
    }
    case CommandLine::Command::kStatus:
      if (line.status.watch) {
        SignalReader signals;  // before any thread exists (the Session starts them)
        return run_status_watch(line.status, line.common, console, signals);
      }
      return run_status(line.status, line.common, console);
    case CommandLine::Command::kRevoke:
      return run_revoke(line.revoke, line.common, console);
    case CommandLine::Command::kElect: {
      SignalReader signals;
      return run_elect(line.exec, line.common, line.lock, console, signals, inherited);
    }
    case CommandLine::Command::kLeader:
      if (line.leader.watch) {
        SignalReader signals;
        return run_leader_watch(line.leader, line.common, console, signals);
      }
      return run_leader(line.leader, line.common, console);
  }
  return exit_code::kSoftware;
}

int run(int argc, char** argv) {
  ensure_standard_descriptors();
  // Before zklock opens anything: these are the descriptors `exec` passes on to its command (and
  // the variables zklock changes for itself, below, it passes on as they were).
  Inheritance inherited{open_descriptors(), {}};
  const ParseOutcome parsed =
      parse_command_line(argc, argv, connect_from_environment(), std::cout, std::cerr);
  if (!parsed.command_line) return parsed.exit_code;

  const Console console(parsed.command_line->common.verbosity());
  try {
    // While zklock has one thread (setenv): the --tls-ca file is the only CA it trusts.
    if (const auto tls = tls_options(parsed.command_line->common)) {
      inherited.environment = trust_only_the_tls_ca(tls->ca_file);
    }
    return run_command(*parsed.command_line, console, inherited);
  } catch (const Failure& e) {
    console.error(e.what());
    return e.code();
  } catch (const InvalidArgumentError& e) {
    console.error(e.what());
    return exit_code::kUsage;
  } catch (const TlsError& e) {
    console.error(std::string(e.what()) + " (TLS)");
    return exit_code::kUnavailable;
  } catch (const NotAuthorizedError& e) {
    console.error(e.what());
    return exit_code::kNoPermission;
  } catch (const ConnectionLossError& e) {
    console.error(std::string(e.what()) + " (ZooKeeper unreachable)");
    return exit_code::kUnavailable;
  } catch (const SessionLostError& e) {
    console.error(std::string(e.what()) + " (ZooKeeper session lost)");
    return exit_code::kUnavailable;
  } catch (const Error& e) {
    if (e.errc() == Errc::incompatible_lock) {  // the path is not a Mutex's to use
      console.error(std::string(e.what()) +
                    " (--write takes the write side of the read/write lock, --shared its read "
                    "side)");
      return exit_code::kUsage;
    }
    console.error(std::string("unexpected error: ") + e.what());
    return exit_code::kSoftware;
  } catch (const std::exception& e) {
    console.error(std::string("unexpected error: ") + e.what());
    return exit_code::kSoftware;
  }
}

}  // namespace
}  // namespace zklock::cli

int main(int argc, char** argv) { return zklock::cli::run(argc, argv); }
