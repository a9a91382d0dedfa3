// tests/cli/cli_lost_lock_test.cpp: `zklock exec` and `zklock hold` when the lock is lost - the
// real binary cut off from its server by a FaultProxy, with a short session timeout: the command is
// stopped (SIGTERM, then SIGKILL after --grace) and zklock exits 76 before anyone else acquires.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli_process.h"
#include "support/fault_proxy.h"
#include "support/files.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/session.h"

namespace zklock::testing {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Lost locks: a client cut off from the server (FaultProxy blackhole) with a short session timeout.

class CliLostLock : public ::testing::Test {
 protected:
  // 200 ms ticks let the 2 s and 4 s session timeouts below through.
  static void SetUpTestSuite() { server_ = start_fast_expiry_server(4000); }
  static void TearDownTestSuite() { server_.reset(); }
  static std::unique_ptr<ZkServer> server_;
};
std::unique_ptr<ZkServer> CliLostLock::server_;

TEST_F(CliLostLock, ExecStopsTheCommandAndExits76BeforeAnotherAcquires) {
  const TempDir dir;
  const auto path = unique_path("lost");
  const std::string events = dir.file("events");
  auto proxy = FaultProxy::start("127.0.0.1", server_->port());

  // A runs the command through the proxy. The library declares Lost T/20 before the server can
  // expire the session (plus up to a tick of server-side rounding): with T = 4 s, zklock has
  // 200 ms to stop the command and exit before B can be given the lock; it needs ~20 ms. The
  // command dies of the SIGTERM itself (no trap to run) to keep that path short.
  //
  // One event log, appended to by everyone (O_APPEND): its line order is the order of events.
  // The wrapper shell records zklock's exit status the moment zklock exits.
  SpawnOptions options;
  options.log_path = dir.file("a.log");
  options.extra_env = {"EVENTS=" + events};
  ChildProcess a(
      {"/bin/sh", "-c", "\"$@\"; echo \"a-exited $?\" >> \"$EVENTS\"", "sh", kCli, "exec",
       "--verbose", "--connect", proxy->connect_string(), "--session-timeout", "4s", path, "--",
       "sh", "-c", "echo a-command-started >> \"$EVENTS\"; exec sleep 1000"},
      options);
  ASSERT_TRUE(wait_until([&] { return read_file(events) == "a-command-started\n"; }, kEventTimeout))
      << tail_file(options.log_path);

  // B waits for the same lock, connected directly (verbose: a failure shows B's session too).
  Session session(options_for(server_->connect_string()));
  Cli b(dir,
        cli_args("exec", server_->connect_string(),
                 {"--verbose", path, "--", "sh", "-c", "echo b-acquired >> \"$EVENTS\""}),
        {"EVENTS=" + events});
  ASSERT_TRUE(wait_until([&] { return lock_children(session, path).size() == 2; }, kEventTimeout))
      << b.output();

  proxy->blackhole();
  const auto a_status = a.wait_exit(kProcessTimeout);
  ASSERT_TRUE(a_status.has_value()) << tail_file(options.log_path);
  EXPECT_EQ(b.wait(), 0) << b.output();

  const std::string log = read_file(options.log_path);
  EXPECT_EQ(lines_of(read_file(events)),
            (std::vector<std::string>{"a-command-started", "a-exited 76", "b-acquired"}))
      << "zklock A log:\n"
      << log;
  // Cut off, the session is first Suspended (the command runs on), then Lost: the command was
  // stopped by the SIGTERM (128 + 15).
  const auto suspended = log.find("suspended");
  EXPECT_NE(suspended, std::string::npos) << log;
  const auto lost = log.find("LOST", suspended);
  EXPECT_NE(lost, std::string::npos) << log;
  EXPECT_NE(log.find("command ended (exit code 143) after the lock was lost", lost),
            std::string::npos)
      << log;
}

TEST_F(CliLostLock, HoldExits76WhenTheLockIsLost) {
  const TempDir dir;
  const auto path = unique_path("hold-lost");
  auto proxy = FaultProxy::start("127.0.0.1", server_->port());
  Cli holder(dir, cli_args("hold", proxy->connect_string(), {"--session-timeout", "2s", path}));
  holder.wait_for_line();
  proxy->blackhole();
  EXPECT_EQ(holder.wait(), 76) << holder.output();
  EXPECT_NE(holder.output().find("LOST"), std::string::npos) << holder.output();
}

TEST_F(CliLostLock, ExecKillsACommandThatIgnoresSigtermAfterTheGrace) {
  const TempDir dir;
  const auto path = unique_path("grace");
  const std::string started = dir.file("started");
  auto proxy = FaultProxy::start("127.0.0.1", server_->port());
  // The command ignores SIGTERM: only the SIGKILL after --grace ends it.
  Cli cli(dir, cli_args("exec", proxy->connect_string(),
                        {"--session-timeout", "2s", "--grace", "200ms", path, "--", "sh", "-c",
                         "trap '' TERM; : > \"$1\"; while :; do sleep 1; done", "sh", started}));
  ASSERT_TRUE(wait_until([&] { return fs::exists(started); }, kEventTimeout)) << cli.output();
  proxy->blackhole();
  EXPECT_EQ(cli.wait(), 76) << cli.output();
  EXPECT_NE(cli.output().find("SIGKILL"), std::string::npos) << cli.output();
}

}  // namespace
}  // namespace zklock::testing
