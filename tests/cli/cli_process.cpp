// tests/cli/cli_process.cpp
#include "cli_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>

#include "support/files.h"
#include "support/unique_fd.h"
#include "support/wait.h"

namespace zklock::testing {

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

Cli::Cli(const TempDir& dir, std::vector<std::string> args, std::vector<std::string> env) {
  static std::atomic<int> counter{0};
  log_ = dir.file("zklock-" + std::to_string(counter++) + ".log");
  args.insert(args.begin(), kCli);
  SpawnOptions options;
  options.log_path = log_;
  options.extra_env = std::move(env);
  process_ = std::make_unique<ChildProcess>(std::move(args), options);
}

std::string Cli::output() const { return read_file(log_); }

int Cli::wait() {
  const auto status = process_->wait_exit(kProcessTimeout);
  if (!status) {
    ADD_FAILURE() << "zklock did not exit within the timeout; output:\n" << output();
    return exit_code_of(process_->kill());
  }
  return exit_code_of(*status);
}

std::string Cli::wait_for_line() {
  std::string line;
  EXPECT_TRUE(wait_until(
      [&] {
        const std::string text = output();
        const auto end = text.find('\n');
        if (end == std::string::npos) return false;
        line = text.substr(0, end);
        return true;
      },
      kEventTimeout))
      << "no line from zklock; output:\n"
      << output();
  return line;
}

CliResult run_cli(const TempDir& dir, std::vector<std::string> args, std::vector<std::string> env) {
  Cli cli(dir, std::move(args), std::move(env));
  const int code = cli.wait();
  return {code, cli.output()};
}

std::vector<std::string> cli_args(const std::string& command, const std::string& connect,
                                  std::vector<std::string> rest) {
  std::vector<std::string> args = {command, "--connect", connect};
  args.insert(args.end(), rest.begin(), rest.end());
  return args;
}

Gate::Gate(std::string path) : path_(std::move(path)) {
  if (mkfifo(path_.c_str(), 0600) != 0) throw std::runtime_error("mkfifo " + path_);
}

void Gate::open() {
  UniqueFd fifo;
  ASSERT_TRUE(wait_until(
      [&] {
        fifo.reset(::open(path_.c_str(), O_WRONLY | O_NONBLOCK));  // ENXIO until a reader is there
        return fifo.valid();
      },
      kEventTimeout));
  ASSERT_EQ(::write(fifo.get(), "go\n", 3), 3);
}

}  // namespace zklock::testing
