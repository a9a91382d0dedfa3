// tests/cli/cli_exec_test.cpp: `zklock exec` end to end - the real binary against real
// ZooKeeper servers: mutual exclusion, the command's environment, descriptors and signal state,
// exit codes, usage errors, which servers it uses, signals while waiting and while running.
// Commands run under the lock are small sh scripts that leave evidence in files; the server's own
// view (nodes, czxids, owners) is read with a zklock::Session.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_process.h"
#include "support/files.h"
#include "support/four_letter_words.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/session.h"

namespace zklock::testing {
namespace {

class CliExec : public CliTest {};
class CliConnect : public CliTest {};

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// exec: mutual exclusion, environment, exit codes, signals

TEST_F(CliExec, ConcurrentExecsNeverOverlap) {
  const std::string log = dir_.file("critical.log");
  const std::string marker = dir_.file("inside");
  // Inside the lock: claim the marker with noclobber (fails if someone else is inside), log, and
  // linger a little so that a broken lock would let others in - the sleep widens the critical
  // section, it synchronises nothing.
  const std::string script =
      "if ! ( set -C; : > \"$2\" ) 2>/dev/null; then echo \"overlap $$\" >> \"$1\"; exit 3; fi\n"
      "echo \"enter $$\" >> \"$1\"\n"
      "sleep 0.05\n"
      "echo \"exit $$\" >> \"$1\"\n"
      "rm -f \"$2\"\n";
  constexpr int kProcesses = 6;
  std::vector<std::unique_ptr<Cli>> clis;
  for (int i = 0; i < kProcesses; ++i) {
    clis.push_back(std::make_unique<Cli>(
        dir_,
        cli_args("exec", server_.connect, {path_, "--", "sh", "-c", script, "sh", log, marker})));
  }
  for (auto& cli : clis) EXPECT_EQ(cli->wait(), 0) << cli->output();

  const auto lines = lines_of(read_file(log));
  ASSERT_EQ(lines.size(), 2u * kProcesses) << read_file(log);
  std::set<std::string> pids;
  for (size_t i = 0; i < lines.size(); i += 2) {
    ASSERT_EQ(lines[i].rfind("enter ", 0), 0u) << "line " << i << ": " << lines[i];
    const std::string pid = lines[i].substr(6);
    EXPECT_EQ(lines[i + 1], "exit " + pid) << "line " << i + 1;
    pids.insert(pid);
  }
  EXPECT_EQ(pids.size(), static_cast<size_t>(kProcesses)) << "each process entered exactly once";

  EXPECT_EQ(lock_children(session_, path_).size(), 0u) << "every exec released its node";
}

TEST_F(CliExec, CommandSeesTheLockInItsEnvironment) {
  const std::string env_file = dir_.file("env");
  Gate gate(dir_.file("gate"));
  // Write the environment atomically (rename), then stay inside the lock until the test has
  // compared it with the server's view.
  Cli cli(dir_, cli_args("exec", server_.connect,
                         {"--description", "env check", path_, "--", "sh", "-c",
                          "env > \"$1.tmp\" && mv \"$1.tmp\" \"$1\" && read _ < \"$2\"", "sh",
                          env_file, gate.path()}));
  ASSERT_TRUE(wait_until([&] { return fs::exists(env_file); }, kEventTimeout)) << cli.output();

  std::map<std::string, std::string> env;
  for (const auto& line : lines_of(read_file(env_file))) {
    const auto eq = line.find('=');
    if (line.rfind("ZKLOCK_", 0) == 0 && eq != std::string::npos) {
      env[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  EXPECT_EQ(env["ZKLOCK_PATH"], path_);
  const std::string node = env["ZKLOCK_NODE"];
  ASSERT_EQ(node.rfind(path_ + "/_c_", 0), 0u) << node;
  const auto children = session_.children(path_);
  ASSERT_TRUE(children.has_value());
  ASSERT_EQ(children->size(), 1u);
  EXPECT_EQ(path_ + "/" + children->front(), node) << "ZKLOCK_NODE is the only node on the path";

  const auto data = session_.get(node);
  ASSERT_TRUE(data.has_value());
  EXPECT_EQ(env["ZKLOCK_FENCING_TOKEN"], std::to_string(data->stat.czxid));
  EXPECT_EQ(env["ZKLOCK_SESSION_ID"], format_session_id(data->stat.ephemeral_owner));
  const std::string suffix = node.substr(node.rfind("-lock-") + 6);
  EXPECT_EQ(env["ZKLOCK_SEQUENCE"], std::to_string(std::stoi(suffix)));
  const json identity = json::parse(data->data);
  EXPECT_EQ(identity["lib"], "zklock");
  EXPECT_EQ(identity["pid"], cli.pid());
  EXPECT_EQ(identity["description"], "env check");

  gate.open();
  EXPECT_EQ(cli.wait(), 0) << cli.output();
  // zklock closes its session before it exits: the node is gone already, no polling needed.
  EXPECT_FALSE(session_.get(node).has_value()) << "lock node still there after zklock exited";
}

TEST_F(CliExec, CommandInheritsOnlyTheInvokersDescriptors) {
  // ls lists its own descriptors: stdin, stdout, stderr (what zklock was given) and 3, its handle
  // on the directory. zklock's ZooKeeper socket, signalfd and eventfds must not be among them (a
  // socket kept open by the command would outlive zklock).
  const auto result = run_cli(
      dir_, cli_args("exec", server_.connect, {unique_path("fds"), "--", "ls", "/proc/self/fd"}));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(lines_of(result.output), (std::vector<std::string>{"0", "1", "2", "3"}));
}

TEST_F(CliExec, CommandStartsWithTheInvokersSignalState) {
  // zklock blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD for itself; the command must get the mask
  // and actions zklock was started with - here (the test's children) nothing blocked or ignored.
  const auto result = run_cli(dir_, cli_args("exec", server_.connect,
                                             {unique_path("sigstate"), "--", "grep", "-E",
                                              "^Sig(Blk|Ign):", "/proc/self/status"}));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(lines_of(result.output),
            (std::vector<std::string>{"SigBlk:\t0000000000000000", "SigIgn:\t0000000000000000"}));
}

TEST_F(CliExec, CommandRunsInItsOwnProcessGroupUnlessForeground) {
  // The shell prints its pid and its process group (field 5 of /proc/PID/stat; "sh" has no space).
  const std::vector<std::string> print_group = {"--", "sh", "-c",
                                                "echo $$ $(cut -d' ' -f5 /proc/$$/stat)"};
  auto args = cli_args("exec", server_.connect, {unique_path("pgroup")});
  args.insert(args.end(), print_group.begin(), print_group.end());
  const auto own = run_cli(dir_, args);
  ASSERT_EQ(own.exit_code, 0) << own.output;
  std::istringstream own_fields(own.output);
  pid_t pid = 0, group = 0;
  own_fields >> pid >> group;
  EXPECT_EQ(group, pid) << "the command leads a process group of its own";

  args = cli_args("exec", server_.connect, {"--foreground", unique_path("pgroup")});
  args.insert(args.end(), print_group.begin(), print_group.end());
  Cli foreground(dir_, args);
  ASSERT_EQ(foreground.wait(), 0) << foreground.output();
  std::istringstream foreground_fields(foreground.output());
  foreground_fields >> pid >> group;
  EXPECT_EQ(group, foreground.pid()) << "with --foreground, the command is in zklock's group";
}

TEST_F(CliExec, ExitCodeIsTheCommandsOwn) {
  EXPECT_EQ(run_cli(dir_, cli_args("exec", server_.connect, {path_, "--", "sh", "-c", "exit 7"}))
                .exit_code,
            7);
  EXPECT_EQ(run_cli(dir_, cli_args("exec", server_.connect, {path_, "--", "true"})).exit_code, 0);
  // A command's own "--" reaches it untouched (only the first one separates).
  const auto echoed =
      run_cli(dir_, cli_args("exec", server_.connect, {path_, "--", "echo", "a", "--", "b"}));
  EXPECT_EQ(echoed.exit_code, 0);
  EXPECT_EQ(echoed.output, "a -- b\n");
}

TEST_F(CliExec, CommandKilledBySignalGives128PlusSignal) {
  const auto result = run_cli(
      dir_,
      cli_args("exec", server_.connect, {unique_path("sig"), "--", "sh", "-c", "kill -USR1 $$"}));
  EXPECT_EQ(result.exit_code, 128 + SIGUSR1) << result.output;
}

TEST_F(CliExec, MissingCommandIs127AndTakesNoLock) {
  for (const std::string command :
       {"/nonexistent/zklock-test-command", "zklock-test-no-such-command"}) {
    const auto result = run_cli(dir_, cli_args("exec", server_.connect, {path_, "--", command}));
    EXPECT_EQ(result.exit_code, 127) << result.output;
    EXPECT_NE(result.output.find("not found"), std::string::npos) << result.output;
  }
  EXPECT_FALSE(session_.children(path_).has_value()) << "zklock queued for a command it cannot run";
}

// A path that holds Curator's read/write lock is refused (a Mutex would not keep its readers
// out): exit 64 with the reason, the command not run, nothing of ours left.
TEST_F(CliExec, APathHoldingAReadWriteLockIs64AndRunsNothing) {
  session_.create(path_, {}, CreateMode::kPersistent, true);
  const std::string reader = path_ + "/_c_00000000-0000-4000-8000-000000000000-__READ__0000000000";
  session_.create(reader, {}, CreateMode::kEphemeral);
  const std::string touched = dir_.file("ran");
  const auto result =
      run_cli(dir_, cli_args("exec", server_.connect, {path_, "--", "touch", touched}));
  EXPECT_EQ(result.exit_code, 64) << result.output;
  EXPECT_NE(result.output.find("read/write lock"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(touched)) << "the command ran";
  EXPECT_EQ(session_.children(path_)->size(), 1U) << "zklock left its node";
}

TEST_F(CliExec, NonExecutableCommandIs126) {
  const std::string script = dir_.file("not-executable.sh");
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  ::chmod(script.c_str(), 0644);
  const auto result =
      run_cli(dir_, cli_args("exec", server_.connect, {unique_path("noexec"), "--", script}));
  EXPECT_EQ(result.exit_code, 126) << result.output;
}

TEST_F(CliExec, BadUsageIs64) {
  const std::string touched = dir_.file("ran");
  const std::vector<std::string> touch = {"--", "touch", touched};
  struct Case {
    std::vector<std::string> args;
    std::string expect_in_output;
  };
  const std::vector<Case> cases = {
      {{"relative/path"}, "path"},
      {{"/a//b"}, "path"},
      {{"/zookeeper/mine"}, "path"},
      {{"--timeout", "5", path_}, "missing unit"},
      {{"--timeout", "5 parsecs", path_}, "invalid duration"},
      {{"--timeout=-1s", path_}, "invalid duration"},
      {{"--session-timeout", "1.5d", path_}, "unknown unit"},
      {{"--grace", "1e3ms", path_}, "invalid duration"},
  };
  for (const auto& c : cases) {
    auto args = cli_args("exec", server_.connect, c.args);
    args.insert(args.end(), touch.begin(), touch.end());
    const auto result = run_cli(dir_, args);
    EXPECT_EQ(result.exit_code, 64) << ::testing::PrintToString(c.args) << "\n" << result.output;
    EXPECT_NE(result.output.find(c.expect_in_output), std::string::npos)
        << ::testing::PrintToString(c.args) << "\n"
        << result.output;
  }
  // No command at all, and a command without the "--" separator.
  EXPECT_EQ(run_cli(dir_, cli_args("exec", server_.connect, {path_})).exit_code, 64);
  EXPECT_EQ(run_cli(dir_, cli_args("exec", server_.connect, {path_, "--"})).exit_code, 64);
  EXPECT_EQ(run_cli(dir_, cli_args("exec", server_.connect, {path_, "touch", touched})).exit_code,
            64);
  EXPECT_FALSE(fs::exists(touched)) << "a command ran despite bad usage";
}

TEST_F(CliExec, UnreachableServerIs69) {
  const std::string nobody = "127.0.0.1:" + std::to_string(pick_free_port());
  const auto result = run_cli(dir_, {"exec", "--connect", nobody, "--connect-timeout", "1s",
                                     "/zklock-test/unreachable", "--", "true"});
  EXPECT_EQ(result.exit_code, 69) << result.output;
  EXPECT_NE(result.output.find(nobody), std::string::npos) << result.output;
}

// README: "Servers come from --connect, else $ZKLOCK_CONNECT, else 127.0.0.1:2181". With the
// environment naming a live server and --connect one where nobody answers, every command aims at
// --connect: it exits 69 naming that server, and does nothing on the environment's server - a
// user aiming a command at one cluster must never lock on another.
TEST_F(CliConnect, ExplicitConnectBeatsTheEnvironment) {
  const std::string nobody = "127.0.0.1:" + std::to_string(pick_free_port());
  const std::vector<std::string> env = {"ZKLOCK_CONNECT=" + server_.connect};
  const std::string touched = dir_.file("ran");
  const std::vector<std::vector<std::string>> commands = {
      {"exec", "--connect", nobody, "--connect-timeout", "1s", path_, "--", "touch", touched},
      {"hold", "--connect-timeout", "1s", "--connect=" + nobody, path_},
      {"status", "--connect", nobody, "--connect-timeout", "1s", path_},
  };
  for (const auto& args : commands) {
    SCOPED_TRACE(args.front());
    Cli cli(dir_, args, env);
    EXPECT_EQ(cli.wait(), 69) << cli.output();
    EXPECT_NE(cli.output().find(nobody), std::string::npos) << cli.output();
  }
  EXPECT_FALSE(fs::exists(touched)) << "the command ran under a lock on $ZKLOCK_CONNECT's server";
  EXPECT_FALSE(session_.children(path_).has_value())
      << "a command queued on $ZKLOCK_CONNECT's server despite --connect";
}

TEST_F(CliExec, TimeoutWhileAnotherHoldsIs75) {
  Cli holder(dir_, cli_args("hold", server_.connect, {path_}));
  holder.wait_for_line();
  const std::string touched = dir_.file("ran");
  for (const std::string timeout : {"300ms", "0s"}) {  // 0: one attempt, no waiting
    SCOPED_TRACE(timeout);
    const auto result =
        run_cli(dir_, cli_args("exec", server_.connect,
                               {"--verbose", "--timeout", timeout, path_, "--", "touch", touched}));
    EXPECT_EQ(result.exit_code, 75) << result.output;
    EXPECT_NE(result.output.find("timed out after " + timeout), std::string::npos) << result.output;
    EXPECT_FALSE(fs::exists(touched)) << "the command ran without the lock";
    EXPECT_EQ(lock_children(session_, path_).size(), 1u)
        << "the timed-out exec left its node behind";
  }
  // --verbose reports the queue position while waiting.
  const auto waited = run_cli(
      dir_,
      cli_args("exec", server_.connect, {"--verbose", "--timeout", "300ms", path_, "--", "true"}));
  EXPECT_NE(waited.output.find("1 contender ahead"), std::string::npos) << waited.output;
  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
}

TEST_F(CliExec, TerminationSignalsAreForwardedToTheCommand) {
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
    SCOPED_TRACE(sigabbrev_np(sig));
    const std::string got = dir_.file(std::string("got-") + sigabbrev_np(sig));
    const std::string ready = dir_.file(std::string("ready-") + sigabbrev_np(sig));
    // The command traps the signal, records it and exits 42; `wait` returns at once on a trapped
    // signal (the background sleep is only something to wait on, killed on the way out).
    const std::string script =
        std::string("trap 'echo caught >> \"$1\"; kill $! 2>/dev/null; exit 42' ") +
        sigabbrev_np(sig) + "\n: > \"$2\"\nsleep 1000 & wait\n";
    Cli cli(dir_, cli_args("exec", server_.connect,
                           {unique_path("forward"), "--", "sh", "-c", script, "sh", got, ready}));
    ASSERT_TRUE(wait_until([&] { return fs::exists(ready); }, kEventTimeout)) << cli.output();
    // Only zklock gets the signal: the command runs in a process group of its own.
    cli.signal(sig);
    EXPECT_EQ(cli.wait(), 42) << cli.output();
    EXPECT_EQ(read_file(got), "caught\n");
  }
}

TEST_F(CliExec, SignalWhileWaitingLeavesTheQueue) {
  Cli holder(dir_, cli_args("hold", server_.connect, {path_}));
  holder.wait_for_line();
  const std::string touched = dir_.file("ran");
  for (const int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sigabbrev_np(sig));
    Cli waiter(dir_, cli_args("exec", server_.connect, {path_, "--", "touch", touched}));
    ASSERT_TRUE(
        wait_until([&] { return lock_children(session_, path_).size() == 2; }, kEventTimeout))
        << waiter.output();
    waiter.signal(sig);
    EXPECT_EQ(waiter.wait(), 128 + sig) << waiter.output();
    EXPECT_TRUE(
        wait_until([&] { return lock_children(session_, path_).size() == 1; }, kEventTimeout))
        << "the interrupted waiter left its node";
  }
  EXPECT_FALSE(fs::exists(touched)) << "an interrupted waiter ran its command";
  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
  EXPECT_TRUE(
      wait_until([&] { return lock_children(session_, path_).size() == 0; }, kEventTimeout));
}

}  // namespace
}  // namespace zklock::testing
