// tests/cli/command_line_test.cpp: zklock's command line parsed as the CLI parses it
// (tools/zklock/command_line.h), with no server and no command run: which command, which
// servers (--connect, else $ZKLOCK_CONNECT, else the default), options and their durations, and
// every usage error exiting 64 with a message that says what is wrong.
#include "command_line.h"

#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "exit_codes.h"
#include "zklock/version.h"

namespace zklock::cli {
namespace {

using std::chrono::milliseconds;

struct Parsed {
  ParseOutcome outcome;
  std::string out;  // --help, --version
  std::string err;  // usage errors

  const CommandLine& line() const { return *outcome.command_line; }
};

// Parses `zklock ARGS...` with $ZKLOCK_CONNECT = `environment`.
Parsed parse(std::vector<std::string> args, std::optional<std::string> environment = {}) {
  args.insert(args.begin(), "zklock");
  std::vector<const char*> argv;
  for (const auto& arg : args) argv.push_back(arg.c_str());
  std::ostringstream out;
  std::ostringstream err;
  ParseOutcome outcome =
      parse_command_line(static_cast<int>(argv.size()), argv.data(), environment, out, err);
  return {std::move(outcome), out.str(), err.str()};
}

// Asserts that `args` is bad usage: no command line, exit 64, `expected` in the message.
void expect_usage_error(const std::vector<std::string>& args, const std::string& expected) {
  SCOPED_TRACE(::testing::PrintToString(args));
  const Parsed parsed = parse(args);
  EXPECT_FALSE(parsed.outcome.command_line.has_value());
  EXPECT_EQ(parsed.outcome.exit_code, exit_code::kUsage);
  EXPECT_NE(parsed.err.find(expected), std::string::npos) << parsed.err;
}

// ---- Commands and their arguments.

TEST(CommandLineTest, ElectTakesExecsOptionsAValueAndAgain) {
  const Parsed parsed =
      parse({"elect", "--value", "host-a", "--again", "--on-lost", "kill", "/svc", "--", "run"});
  ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
  EXPECT_EQ(parsed.line().command, CommandLine::Command::kElect);
  EXPECT_EQ(parsed.line().exec.path, "/svc");
  EXPECT_EQ(parsed.line().lock.description, "host-a");
  EXPECT_TRUE(parsed.line().exec.again);
  EXPECT_EQ(parsed.line().exec.on_lost, OnLost::kKill);
  EXPECT_EQ(parsed.line().exec.command, std::vector<std::string>{"run"});
  expect_usage_error({"elect", "/svc"}, "elect: missing command");
  expect_usage_error({"elect", "--value", "a", "--description", "b", "/svc", "--", "run"},
                     "excludes");
  expect_usage_error({"exec", "--again", "/svc", "--", "run"}, "--again");
  // One leader at a time: no read side, no write side of a read/write lock.
  expect_usage_error({"elect", "--shared", "/svc", "--", "run"}, "--shared");
  expect_usage_error({"elect", "--write", "/svc", "--", "run"}, "--write");
}

TEST(CommandLineTest, LeaderTakesThePathAndWatch) {
  Parsed parsed = parse({"leader", "/svc"});
  ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
  EXPECT_EQ(parsed.line().command, CommandLine::Command::kLeader);
  EXPECT_EQ(parsed.line().leader.path, "/svc");
  EXPECT_FALSE(parsed.line().leader.watch);
  parsed = parse({"leader", "--watch", "/svc"});
  ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
  EXPECT_TRUE(parsed.line().leader.watch);
  expect_usage_error({"leader", "/svc", "--", "run"}, "only `zklock exec` and `zklock elect`");
}

TEST(CommandLineTest, ExecTakesThePathAndEverythingAfterTheFirstSeparatorVerbatim) {
  const Parsed parsed = parse({"exec", "/locks/a", "--", "echo", "a", "--", "-v", "--connect"});
  ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
  EXPECT_EQ(parsed.line().command, CommandLine::Command::kExec);
  EXPECT_EQ(parsed.line().exec.path, "/locks/a");
  EXPECT_EQ(parsed.line().exec.command,
            (std::vector<std::string>{"echo", "a", "--", "-v", "--connect"}));
  EXPECT_FALSE(parsed.line().common.verbose) << "the command's -v is not zklock's";
}

TEST(CommandLineTest, HoldAndStatusTakeThePathAndJson) {
  const Parsed hold = parse({"hold", "--json", "--description", "db work", "/locks/db"});
  ASSERT_TRUE(hold.outcome.command_line) << hold.err;
  EXPECT_EQ(hold.line().command, CommandLine::Command::kHold);
  EXPECT_EQ(hold.line().hold.path, "/locks/db");
  EXPECT_TRUE(hold.line().hold.json);
  EXPECT_EQ(hold.line().lock.description, "db work");

  const Parsed status = parse({"status", "/locks/db"});
  ASSERT_TRUE(status.outcome.command_line) << status.err;
  EXPECT_EQ(status.line().command, CommandLine::Command::kStatus);
  EXPECT_EQ(status.line().status.path, "/locks/db");
  EXPECT_FALSE(status.line().status.json);
  EXPECT_FALSE(status.line().status.watch);
  EXPECT_EQ(status.line().status.interval, milliseconds(1000)) << "--interval defaults to 1s";
}

TEST(CommandLineTest, StatusWatchTakesAnInterval) {
  const Parsed watch = parse({"status", "--watch", "--interval", "250ms", "/locks/db"});
  ASSERT_TRUE(watch.outcome.command_line) << watch.err;
  EXPECT_EQ(watch.line().command, CommandLine::Command::kStatus);
  EXPECT_TRUE(watch.line().status.watch);
  EXPECT_EQ(watch.line().status.interval, milliseconds(250));
  EXPECT_EQ(watch.line().status.path, "/locks/db");

  expect_usage_error({"status", "--interval", "1s", "/l"}, "--watch");
  expect_usage_error({"status", "--watch", "--json", "/l"}, "excludes");
  expect_usage_error({"status", "--watch", "--interval", "0s", "/l"}, "must be more than 0");
  expect_usage_error({"status", "--watch", "--interval", "1", "/l"}, "missing unit");
  expect_usage_error({"hold", "--watch", "/l"}, "--watch");
}

TEST(CommandLineTest, DefaultsAreThoseTheHelpShows) {
  const Parsed parsed = parse({"exec", "/l", "--", "true"});
  ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
  const CommandLine& line = parsed.line();
  EXPECT_EQ(line.common.session_timeout, milliseconds(10'000));
  EXPECT_EQ(line.common.connect_timeout, milliseconds(15'000));
  EXPECT_EQ(line.common.user, "");
  EXPECT_EQ(line.common.verbosity(), Verbosity::kNormal);
  EXPECT_FALSE(line.lock.timeout.has_value()) << "no --timeout: wait as long as it takes";
  EXPECT_EQ(line.exec.on_lost, OnLost::kTerm);
  EXPECT_EQ(line.exec.grace, milliseconds(5000));
  EXPECT_FALSE(line.exec.foreground);
}

// ---- Which servers (issue 12, item 15: the environment once beat an explicit --connect).

TEST(CommandLineTest, ConnectFlagBeatsTheEnvironmentForEveryCommand) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"exec", "--connect", "flag:1", "/l", "--", "true"},
        std::vector<std::string>{"hold", "--connect=flag:1", "/l"},
        std::vector<std::string>{"status", "/l", "--connect", "flag:1"}}) {
    SCOPED_TRACE(args.front());
    const Parsed parsed = parse(args, "environment:2");
    ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
    EXPECT_EQ(parsed.line().common.connect, "flag:1");
  }
}

TEST(CommandLineTest, EnvironmentBeatsTheDefault) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"exec", "/l", "--", "true"},
        std::vector<std::string>{"hold", "/l"}, std::vector<std::string>{"status", "/l"}}) {
    SCOPED_TRACE(args.front());
    const Parsed parsed = parse(args, "environment:2");
    ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
    EXPECT_EQ(parsed.line().common.connect, "environment:2");
  }
}

TEST(CommandLineTest, WithoutFlagOrEnvironmentTheDefaultServer) {
  const Parsed parsed = parse({"status", "/l"});
  ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
  EXPECT_EQ(parsed.line().common.connect, "127.0.0.1:2181");
}

TEST(CommandLineTest, ChooseConnectOrder) {
  EXPECT_EQ(choose_connect(std::string("f:1"), std::string("e:2")), "f:1");
  EXPECT_EQ(choose_connect(std::nullopt, std::string("e:2")), "e:2");
  EXPECT_EQ(choose_connect(std::nullopt, std::string("")), kDefaultConnect) << "empty is unset";
  EXPECT_EQ(choose_connect(std::nullopt, std::nullopt), kDefaultConnect);
  // An explicit empty --connect stays empty: the library refuses it with a clear message, rather
  // than zklock quietly using another cluster.
  EXPECT_EQ(choose_connect(std::string(""), std::string("e:2")), "");
}

// ---- Options.

TEST(CommandLineTest, DurationOptionsTakeEveryUnit) {
  const Parsed parsed = parse({"exec", "--timeout", "300ms", "--session-timeout", "1.5m",
                               "--connect-timeout", "2s", "--grace", "1h", "/l", "--", "true"});
  ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
  const CommandLine& line = parsed.line();
  EXPECT_EQ(line.lock.timeout, milliseconds(300));
  EXPECT_EQ(line.common.session_timeout, milliseconds(90'000));
  EXPECT_EQ(line.common.connect_timeout, milliseconds(2000));
  EXPECT_EQ(line.exec.grace, std::chrono::hours(1));
}

TEST(CommandLineTest, TimeoutZeroMeansTryOnce) {
  const Parsed parsed = parse({"hold", "--timeout", "0s", "/l"});
  ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
  ASSERT_TRUE(parsed.line().lock.timeout.has_value());
  EXPECT_EQ(*parsed.line().lock.timeout, milliseconds(0));
}

TEST(CommandLineTest, OnLostTakesTermKillOrIgnore) {
  for (const auto& [text, policy] :
       {std::pair{"term", OnLost::kTerm}, std::pair{"kill", OnLost::kKill},
        std::pair{"ignore", OnLost::kIgnore}}) {
    SCOPED_TRACE(text);
    const Parsed parsed = parse({"exec", "--on-lost", text, "/l", "--", "true"});
    ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
    EXPECT_EQ(parsed.line().exec.on_lost, policy);
  }
  expect_usage_error({"exec", "--on-lost", "pray", "/l", "--", "true"},
                     "expected term, kill or ignore");
}

TEST(CommandLineTest, VerbosityFlags) {
  EXPECT_EQ(parse({"status", "-v", "/l"}).line().common.verbosity(), Verbosity::kVerbose);
  EXPECT_EQ(parse({"status", "--quiet", "/l"}).line().common.verbosity(), Verbosity::kQuiet);
  expect_usage_error({"status", "-q", "-v", "/l"}, "excludes");
}

TEST(CommandLineTest, UserNeedsAColonAfterANonEmptyName) {
  const Parsed parsed = parse({"status", "--user", "alice:s3:cret", "/l"});
  ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
  EXPECT_EQ(parsed.line().common.user, "alice:s3:cret");
  expect_usage_error({"status", "--user", "alice", "/l"}, "USER:PASSWORD");
  expect_usage_error({"status", "--user", ":secret", "/l"}, "USER:PASSWORD");
}

TEST(CommandLineTest, ForegroundFlag) {
  const Parsed parsed = parse({"exec", "--foreground", "/l", "--", "vi"});
  ASSERT_TRUE(parsed.outcome.command_line) << parsed.err;
  EXPECT_TRUE(parsed.line().exec.foreground);
}

// ---- Usage errors: 64, a message, nothing run.

TEST(CommandLineTest, SharedAndWriteChooseTheReadWriteLockForExecAndHold) {
  EXPECT_EQ(parse({"exec", "/a", "--", "true"}).line().lock.mode, LockMode::kExclusive);
  EXPECT_EQ(parse({"exec", "--shared", "/a", "--", "true"}).line().lock.mode, LockMode::kShared);
  EXPECT_EQ(parse({"exec", "--write", "/a", "--", "true"}).line().lock.mode, LockMode::kWrite);
  EXPECT_EQ(parse({"hold", "--shared", "/a"}).line().lock.mode, LockMode::kShared);
  EXPECT_EQ(parse({"hold", "--write", "/a"}).line().lock.mode, LockMode::kWrite);
  expect_usage_error({"exec", "--shared", "--write", "/a", "--", "true"}, "--write");
  expect_usage_error({"status", "--shared", "/a"}, "--shared");
}

TEST(CommandLineTest, BadDurationsAreUsageErrors) {
  expect_usage_error({"exec", "--timeout", "5", "/l", "--", "true"}, "missing unit");
  expect_usage_error({"exec", "--timeout", "5 parsecs", "/l", "--", "true"}, "invalid duration");
  expect_usage_error({"exec", "--timeout=-1s", "/l", "--", "true"}, "invalid duration");
  expect_usage_error({"exec", "--session-timeout", "1.5d", "/l", "--", "true"}, "unknown unit");
  expect_usage_error({"exec", "--grace", "1e3ms", "/l", "--", "true"}, "invalid duration");
  expect_usage_error({"hold", "--session-timeout", "0s", "/l"}, "must be more than 0");
  expect_usage_error({"hold", "--connect-timeout", "0ms", "/l"}, "must be more than 0");
}

TEST(CommandLineTest, ExecCommandMustComeAfterTheSeparator) {
  expect_usage_error({"exec", "/l"}, "missing command");
  expect_usage_error({"exec", "/l", "--"}, "missing command");
  expect_usage_error({"exec", "/l", "touch", "x"}, "put the command after --");
}

TEST(CommandLineTest, OnlyExecTakesACommand) {
  expect_usage_error({"hold", "/l", "--", "true"},
                     "only `zklock exec` and `zklock elect` run a command");
  expect_usage_error({"status", "/l", "--", "true"},
                     "only `zklock exec` and `zklock elect` run a command");
}

TEST(CommandLineTest, ACommandAndItsLockPathAreRequired) {
  expect_usage_error({}, "subcommand is required");
  expect_usage_error({"status"}, "LOCK_PATH");
  expect_usage_error({"frobnicate", "/l"}, "unknown command 'frobnicate'");
  expect_usage_error({"status", "--no-such-option", "/l"}, "--no-such-option");
}

TEST(CommandLineTest, HelpAndVersionExitZeroOnStdout) {
  const Parsed help = parse({"--help"});
  EXPECT_FALSE(help.outcome.command_line.has_value());
  EXPECT_EQ(help.outcome.exit_code, exit_code::kOk);
  EXPECT_NE(help.out.find("Servers: --connect, else $ZKLOCK_CONNECT"), std::string::npos)
      << help.out;
  EXPECT_EQ(help.err, "");

  const Parsed exec_help = parse({"exec", "--help"});
  EXPECT_EQ(exec_help.outcome.exit_code, exit_code::kOk);
  EXPECT_NE(exec_help.out.find("ZKLOCK_FENCING_TOKEN"), std::string::npos) << exec_help.out;

  const Parsed version = parse({"--version"});
  EXPECT_EQ(version.outcome.exit_code, exit_code::kOk);
  EXPECT_NE(version.out.find(ZKLOCK_VERSION_STRING), std::string::npos) << version.out;
}

}  // namespace
}  // namespace zklock::cli
