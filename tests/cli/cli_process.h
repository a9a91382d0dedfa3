// tests/cli/cli_process.h: the real `zklock` binary (ZKLOCK_CLI) run by the CLI tests as a child
// process, with its output in a log file; and a gate a command under the lock waits at.
//
// Synchronisation is by evidence, never by sleeping: a file appearing, a line in a log, a node
// count on the server, a FIFO the test opens when it is done looking.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/session.h"

namespace zklock::testing {

inline constexpr const char* kCli = ZKLOCK_CLI;

// Generous upper bounds against hangs; never expected to be reached.
inline constexpr std::chrono::seconds kProcessTimeout{30};
inline constexpr std::chrono::seconds kEventTimeout{20};

// The shell's view of a wait status: the exit code, or 128 + N for death by signal N.
int exit_code_of(int wait_status);

// One running `zklock ARGS...`, its environment extended by `env` ("NAME=VALUE"); stdout and
// stderr go to a log file in `dir`.
class Cli {
 public:
  Cli(const TempDir& dir, std::vector<std::string> args, std::vector<std::string> env = {});

  pid_t pid() const { return process_->pid(); }
  // Everything it printed so far.
  std::string output() const;
  // Sends `sig` to zklock alone (its process group; the command it runs has a group of its own).
  void signal(int sig) { process_->signal(sig); }

  // Waits for the exit and returns the exit code (exit_code_of). Fails the test on a hang (and
  // then kills it).
  int wait();

  // Waits until the output has a whole line (zklock hold prints one when it holds); returns it.
  std::string wait_for_line();

 private:
  std::string log_;
  std::unique_ptr<ChildProcess> process_;
};

struct CliResult {
  int exit_code;
  std::string output;
};

// Runs `zklock ARGS...` to its end.
CliResult run_cli(const TempDir& dir, std::vector<std::string> args,
                  std::vector<std::string> env = {});

// {command, "--connect", connect, rest...}
std::vector<std::string> cli_args(const std::string& command, const std::string& connect,
                                  std::vector<std::string> rest);

// A CLI test on the process's shared server: a scratch directory, a lock path of its own, and a
// session to see the server's side with.
class CliTest : public ::testing::Test {
 protected:
  const ServerRef server_ = shared_server();
  const TempDir dir_;
  const std::string path_ = unique_path("cli");
  Session session_{options_for(server_.connect)};
};

// A FIFO a command blocks on (`read _ < FIFO`) until the test opens it: "you may go on now".
class Gate {
 public:
  // Creates the FIFO at `path`. Throws std::runtime_error when it cannot.
  explicit Gate(std::string path);
  const std::string& path() const { return path_; }
  // Opens the FIFO once the command is reading it and writes a line, which ends its `read`.
  void open();

 private:
  std::string path_;
};

}  // namespace zklock::testing
