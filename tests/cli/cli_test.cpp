// The `zklock` command-line tool, end to end: the real binary (ZKLOCK_CLI) run as child processes
// against real ZooKeeper servers. Commands run under the lock are small sh scripts that leave
// evidence in files; the server's own view (nodes, czxids, owners) is read with a zklock::Session.
//
// Synchronisation is by evidence, never by sleeping: a file appearing, a line in a log, a node
// count on the server, a FIFO the test opens when it is done looking.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/fault_proxy.h"
#include "support/process.h"
#include "support/wait.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/session.h"

namespace zklock::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kCli = ZKLOCK_CLI;

// Generous upper bounds against hangs; never expected to be reached.
constexpr auto kProcessTimeout = 30s;
constexpr auto kEventTimeout = 20s;

// ---------------------------------------------------------------------------------------------
// Helpers

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string hex_session(std::int64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(id));
  return buf;
}

// The shell's view of a wait status: the exit code, or 128 + N for death by signal N.
int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// A temporary directory for one test's files, removed with everything in it.
class TempDir {
 public:
  TempDir() : path_(make_temp_dir("zklock-cli-test-")) {}
  ~TempDir() {
    if (!keep_test_dirs()) {
      std::error_code ignored;
      fs::remove_all(path_, ignored);
    }
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// One running `zklock` process; stdout and stderr go to a log file in `dir`.
class Cli {
 public:
  Cli(const TempDir& dir, std::vector<std::string> args, std::vector<std::string> env = {}) {
    static std::atomic<int> counter{0};
    log_ = dir.file("zklock-" + std::to_string(counter++) + ".log");
    args.insert(args.begin(), kCli);
    SpawnOptions options;
    options.log_path = log_;
    options.extra_env = std::move(env);
    process_ = std::make_unique<ChildProcess>(std::move(args), options);
  }

  pid_t pid() const { return process_->pid(); }
  std::string output() const { return read_file(log_); }
  // Sends `sig` to zklock alone (its process group; the command it runs has a group of its own).
  void signal(int sig) { process_->signal(sig); }

  // Waits for the exit and returns the exit code (see exit_code_of). Fails the test on a hang.
  int wait() {
    const auto status = process_->wait_exit(kProcessTimeout);
    if (!status) {
      ADD_FAILURE() << "zklock did not exit within the timeout; output:\n" << output();
      return exit_code_of(process_->kill());
    }
    return exit_code_of(*status);
  }

  // Waits until the output contains a whole line (zklock hold prints one when it holds).
  std::string wait_for_line() {
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

 private:
  std::string log_;
  std::unique_ptr<ChildProcess> process_;
};

struct CliResult {
  int exit_code;
  std::string output;
};

CliResult run_cli(const TempDir& dir, std::vector<std::string> args,
                  std::vector<std::string> env = {}) {
  Cli cli(dir, std::move(args), std::move(env));
  const int code = cli.wait();
  return {code, cli.output()};
}

// A FIFO a command blocks on (`read _ < FIFO`) until the test opens it: "you may go on now".
class Gate {
 public:
  explicit Gate(std::string path) : path_(std::move(path)) {
    if (mkfifo(path_.c_str(), 0600) != 0) throw std::runtime_error("mkfifo " + path_);
  }
  const std::string& path() const { return path_; }
  // Opens the FIFO once the command is reading it and writes a line, which ends its `read`.
  void open() {
    int fd = -1;
    ASSERT_TRUE(wait_until(
        [&] {
          fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);  // ENXIO until a reader is there
          return fd >= 0;
        },
        kEventTimeout));
    ASSERT_EQ(::write(fd, "go\n", 3), 3);
    ::close(fd);
  }

 private:
  std::string path_;
};

size_t child_count(Session& session, const std::string& path) {
  const auto children = session.children(path);
  return children ? children->size() : 0;
}

std::vector<std::string> cli_args(const std::string& command, const std::string& connect,
                                  std::vector<std::string> rest) {
  std::vector<std::string> args = {command, "--connect", connect};
  args.insert(args.end(), rest.begin(), rest.end());
  return args;
}

// ---------------------------------------------------------------------------------------------
// exec: mutual exclusion, environment, exit codes, signals

TEST(CliExec, ConcurrentExecsNeverOverlap) {
  const auto server = shared_server();
  const TempDir dir;
  const std::string path = unique_path("mutex");
  const std::string log = dir.file("critical.log");
  const std::string marker = dir.file("inside");
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
        dir,
        cli_args("exec", server.connect, {path, "--", "sh", "-c", script, "sh", log, marker})));
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

  Session session(options_for(server.connect));
  EXPECT_EQ(child_count(session, path), 0u) << "every exec released its node";
}

TEST(CliExec, CommandSeesTheLockInItsEnvironment) {
  const auto server = shared_server();
  const TempDir dir;
  const std::string path = unique_path("env");
  const std::string env_file = dir.file("env");
  Gate gate(dir.file("gate"));
  // Write the environment atomically (rename), then stay inside the lock until the test has
  // compared it with the server's view.
  Cli cli(dir, cli_args("exec", server.connect,
                        {"--description", "env check", path, "--", "sh", "-c",
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
  Session session(options_for(server.connect));
  EXPECT_EQ(env["ZKLOCK_PATH"], path);
  const std::string node = env["ZKLOCK_NODE"];
  ASSERT_EQ(node.rfind(path + "/_c_", 0), 0u) << node;
  const auto children = session.children(path);
  ASSERT_TRUE(children.has_value());
  ASSERT_EQ(children->size(), 1u);
  EXPECT_EQ(path + "/" + children->front(), node) << "ZKLOCK_NODE is the only node on the path";

  const auto data = session.get(node);
  ASSERT_TRUE(data.has_value());
  EXPECT_EQ(env["ZKLOCK_FENCING_TOKEN"], std::to_string(data->stat.czxid));
  EXPECT_EQ(env["ZKLOCK_SESSION_ID"], hex_session(data->stat.ephemeral_owner));
  const std::string suffix = node.substr(node.rfind("-lock-") + 6);
  EXPECT_EQ(env["ZKLOCK_SEQUENCE"], std::to_string(std::stoi(suffix)));
  const json identity = json::parse(data->data);
  EXPECT_EQ(identity["lib"], "zklock");
  EXPECT_EQ(identity["pid"], cli.pid());
  EXPECT_EQ(identity["description"], "env check");

  gate.open();
  EXPECT_EQ(cli.wait(), 0) << cli.output();
  // zklock closes its session before it exits: the node is gone already, no polling needed.
  EXPECT_FALSE(session.get(node).has_value()) << "lock node still there after zklock exited";
}

TEST(CliExec, CommandInheritsOnlyTheInvokersDescriptors) {
  const auto server = shared_server();
  const TempDir dir;
  // ls lists its own descriptors: stdin, stdout, stderr (what zklock was given) and 3, its handle
  // on the directory. zklock's ZooKeeper socket, signalfd and eventfds must not be among them (a
  // socket kept open by the command would outlive zklock).
  const auto result = run_cli(
      dir, cli_args("exec", server.connect, {unique_path("fds"), "--", "ls", "/proc/self/fd"}));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(lines_of(result.output), (std::vector<std::string>{"0", "1", "2", "3"}));
}

TEST(CliExec, CommandStartsWithTheInvokersSignalState) {
  const auto server = shared_server();
  const TempDir dir;
  // zklock blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD for itself; the command must get the mask
  // and actions zklock was started with - here (the test's children) nothing blocked or ignored.
  const auto result = run_cli(dir, cli_args("exec", server.connect,
                                            {unique_path("sigstate"), "--", "grep", "-E",
                                             "^Sig(Blk|Ign):", "/proc/self/status"}));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(lines_of(result.output),
            (std::vector<std::string>{"SigBlk:\t0000000000000000", "SigIgn:\t0000000000000000"}));
}

TEST(CliExec, CommandRunsInItsOwnProcessGroupUnlessForeground) {
  const auto server = shared_server();
  const TempDir dir;
  // The shell prints its pid and its process group (field 5 of /proc/PID/stat; "sh" has no space).
  const std::vector<std::string> print_group = {"--", "sh", "-c",
                                                "echo $$ $(cut -d' ' -f5 /proc/$$/stat)"};
  auto args = cli_args("exec", server.connect, {unique_path("pgroup")});
  args.insert(args.end(), print_group.begin(), print_group.end());
  const auto own = run_cli(dir, args);
  ASSERT_EQ(own.exit_code, 0) << own.output;
  std::istringstream own_fields(own.output);
  pid_t pid = 0, group = 0;
  own_fields >> pid >> group;
  EXPECT_EQ(group, pid) << "the command leads a process group of its own";

  args = cli_args("exec", server.connect, {"--foreground", unique_path("pgroup")});
  args.insert(args.end(), print_group.begin(), print_group.end());
  Cli foreground(dir, args);
  ASSERT_EQ(foreground.wait(), 0) << foreground.output();
  std::istringstream foreground_fields(foreground.output());
  foreground_fields >> pid >> group;
  EXPECT_EQ(group, foreground.pid()) << "with --foreground, the command is in zklock's group";
}

TEST(CliExec, ExitCodeIsTheCommandsOwn) {
  const auto server = shared_server();
  const TempDir dir;
  const auto path = unique_path("code");
  EXPECT_EQ(
      run_cli(dir, cli_args("exec", server.connect, {path, "--", "sh", "-c", "exit 7"})).exit_code,
      7);
  EXPECT_EQ(run_cli(dir, cli_args("exec", server.connect, {path, "--", "true"})).exit_code, 0);
  // A command's own "--" reaches it untouched (only the first one separates).
  const auto echoed =
      run_cli(dir, cli_args("exec", server.connect, {path, "--", "echo", "a", "--", "b"}));
  EXPECT_EQ(echoed.exit_code, 0);
  EXPECT_EQ(echoed.output, "a -- b\n");
}

TEST(CliExec, CommandKilledBySignalGives128PlusSignal) {
  const auto server = shared_server();
  const TempDir dir;
  const auto result = run_cli(
      dir,
      cli_args("exec", server.connect, {unique_path("sig"), "--", "sh", "-c", "kill -USR1 $$"}));
  EXPECT_EQ(result.exit_code, 128 + SIGUSR1) << result.output;
}

TEST(CliExec, MissingCommandIs127AndTakesNoLock) {
  const auto server = shared_server();
  const TempDir dir;
  const auto path = unique_path("missing");
  Session session(options_for(server.connect));
  for (const std::string command :
       {"/nonexistent/zklock-test-command", "zklock-test-no-such-command"}) {
    const auto result = run_cli(dir, cli_args("exec", server.connect, {path, "--", command}));
    EXPECT_EQ(result.exit_code, 127) << result.output;
    EXPECT_NE(result.output.find("not found"), std::string::npos) << result.output;
  }
  EXPECT_FALSE(session.children(path).has_value()) << "zklock queued for a command it cannot run";
}

TEST(CliExec, NonExecutableCommandIs126) {
  const auto server = shared_server();
  const TempDir dir;
  const std::string script = dir.file("not-executable.sh");
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  ::chmod(script.c_str(), 0644);
  const auto result =
      run_cli(dir, cli_args("exec", server.connect, {unique_path("noexec"), "--", script}));
  EXPECT_EQ(result.exit_code, 126) << result.output;
}

TEST(CliExec, BadUsageIs64) {
  const auto server = shared_server();
  const TempDir dir;
  const auto path = unique_path("usage");
  const std::string touched = dir.file("ran");
  const std::vector<std::string> touch = {"--", "touch", touched};
  struct Case {
    std::vector<std::string> args;
    std::string expect_in_output;
  };
  const std::vector<Case> cases = {
      {{"relative/path"}, "path"},
      {{"/a//b"}, "path"},
      {{"/zookeeper/mine"}, "path"},
      {{"--timeout", "5", path}, "missing unit"},
      {{"--timeout", "5 parsecs", path}, "invalid duration"},
      {{"--timeout=-1s", path}, "invalid duration"},
      {{"--session-timeout", "1.5d", path}, "unknown unit"},
      {{"--grace", "1e3ms", path}, "invalid duration"},
  };
  for (const auto& c : cases) {
    auto args = cli_args("exec", server.connect, c.args);
    args.insert(args.end(), touch.begin(), touch.end());
    const auto result = run_cli(dir, args);
    EXPECT_EQ(result.exit_code, 64) << ::testing::PrintToString(c.args) << "\n" << result.output;
    EXPECT_NE(result.output.find(c.expect_in_output), std::string::npos)
        << ::testing::PrintToString(c.args) << "\n"
        << result.output;
  }
  // No command at all, and a command without the "--" separator.
  EXPECT_EQ(run_cli(dir, cli_args("exec", server.connect, {path})).exit_code, 64);
  EXPECT_EQ(run_cli(dir, cli_args("exec", server.connect, {path, "--"})).exit_code, 64);
  EXPECT_EQ(run_cli(dir, cli_args("exec", server.connect, {path, "touch", touched})).exit_code, 64);
  EXPECT_FALSE(fs::exists(touched)) << "a command ran despite bad usage";
}

TEST(CliExec, UnreachableServerIs69) {
  const TempDir dir;
  const std::string nobody = "127.0.0.1:" + std::to_string(pick_free_port());
  const auto result = run_cli(dir, {"exec", "--connect", nobody, "--connect-timeout", "1s",
                                    "/zklock-test/unreachable", "--", "true"});
  EXPECT_EQ(result.exit_code, 69) << result.output;
  EXPECT_NE(result.output.find(nobody), std::string::npos) << result.output;
}

// README: "Servers come from --connect, else $ZKLOCK_CONNECT, else 127.0.0.1:2181". With the
// environment naming a live server and --connect one where nobody answers, every command aims at
// --connect: it exits 69 naming that server, and does nothing on the environment's server - a
// user aiming a command at one cluster must never lock on another.
TEST(CliConnect, ExplicitConnectBeatsTheEnvironment) {
  const auto server = shared_server();
  const TempDir dir;
  const std::string nobody = "127.0.0.1:" + std::to_string(pick_free_port());
  const std::vector<std::string> env = {"ZKLOCK_CONNECT=" + server.connect};
  const auto path = unique_path("flag-wins");
  const std::string touched = dir.file("ran");
  Session session(options_for(server.connect));
  const std::vector<std::vector<std::string>> commands = {
      {"exec", "--connect", nobody, "--connect-timeout", "1s", path, "--", "touch", touched},
      {"hold", "--connect-timeout", "1s", "--connect=" + nobody, path},
      {"status", "--connect", nobody, "--connect-timeout", "1s", path},
  };
  for (const auto& args : commands) {
    SCOPED_TRACE(args.front());
    Cli cli(dir, args, env);
    EXPECT_EQ(cli.wait(), 69) << cli.output();
    EXPECT_NE(cli.output().find(nobody), std::string::npos) << cli.output();
  }
  EXPECT_FALSE(fs::exists(touched)) << "the command ran under a lock on $ZKLOCK_CONNECT's server";
  EXPECT_FALSE(session.children(path).has_value())
      << "a command queued on $ZKLOCK_CONNECT's server despite --connect";
}

TEST(CliExec, TimeoutWhileAnotherHoldsIs75) {
  const auto server = shared_server();
  const TempDir dir;
  const auto path = unique_path("timeout");
  Cli holder(dir, cli_args("hold", server.connect, {path}));
  holder.wait_for_line();
  const std::string touched = dir.file("ran");
  Session session(options_for(server.connect));
  for (const std::string timeout : {"300ms", "0s"}) {  // 0: one attempt, no waiting
    SCOPED_TRACE(timeout);
    const auto result =
        run_cli(dir, cli_args("exec", server.connect,
                              {"--verbose", "--timeout", timeout, path, "--", "touch", touched}));
    EXPECT_EQ(result.exit_code, 75) << result.output;
    EXPECT_NE(result.output.find("timed out after " + timeout), std::string::npos) << result.output;
    EXPECT_FALSE(fs::exists(touched)) << "the command ran without the lock";
    EXPECT_EQ(child_count(session, path), 1u) << "the timed-out exec left its node behind";
  }
  // --verbose reports the queue position while waiting.
  const auto waited = run_cli(
      dir,
      cli_args("exec", server.connect, {"--verbose", "--timeout", "300ms", path, "--", "true"}));
  EXPECT_NE(waited.output.find("1 contender ahead"), std::string::npos) << waited.output;
  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
}

TEST(CliExec, TerminationSignalsAreForwardedToTheCommand) {
  const auto server = shared_server();
  const TempDir dir;
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
    SCOPED_TRACE(sigabbrev_np(sig));
    const std::string got = dir.file(std::string("got-") + sigabbrev_np(sig));
    const std::string ready = dir.file(std::string("ready-") + sigabbrev_np(sig));
    // The command traps the signal, records it and exits 42; `wait` returns at once on a trapped
    // signal (the background sleep is only something to wait on, killed on the way out).
    const std::string script =
        std::string("trap 'echo caught >> \"$1\"; kill $! 2>/dev/null; exit 42' ") +
        sigabbrev_np(sig) + "\n: > \"$2\"\nsleep 1000 & wait\n";
    Cli cli(dir, cli_args("exec", server.connect,
                          {unique_path("forward"), "--", "sh", "-c", script, "sh", got, ready}));
    ASSERT_TRUE(wait_until([&] { return fs::exists(ready); }, kEventTimeout)) << cli.output();
    // Only zklock gets the signal: the command runs in a process group of its own.
    cli.signal(sig);
    EXPECT_EQ(cli.wait(), 42) << cli.output();
    EXPECT_EQ(read_file(got), "caught\n");
  }
}

TEST(CliExec, SignalWhileWaitingLeavesTheQueue) {
  const auto server = shared_server();
  const TempDir dir;
  const auto path = unique_path("cancel");
  Session session(options_for(server.connect));
  Cli holder(dir, cli_args("hold", server.connect, {path}));
  holder.wait_for_line();
  const std::string touched = dir.file("ran");
  for (const int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sigabbrev_np(sig));
    Cli waiter(dir, cli_args("exec", server.connect, {path, "--", "touch", touched}));
    ASSERT_TRUE(wait_until([&] { return child_count(session, path) == 2; }, kEventTimeout))
        << waiter.output();
    waiter.signal(sig);
    EXPECT_EQ(waiter.wait(), 128 + sig) << waiter.output();
    EXPECT_TRUE(wait_until([&] { return child_count(session, path) == 1; }, kEventTimeout))
        << "the interrupted waiter left its node";
  }
  EXPECT_FALSE(fs::exists(touched)) << "an interrupted waiter ran its command";
  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
  EXPECT_TRUE(wait_until([&] { return child_count(session, path) == 0; }, kEventTimeout));
}

// ---------------------------------------------------------------------------------------------
// hold

TEST(CliHold, PrintsTheAcquisitionAndReleasesOnSigterm) {
  const auto server = shared_server();
  const TempDir dir;
  const auto path = unique_path("hold");
  Cli holder(dir, cli_args("hold", server.connect, {"--json", path}));
  const json line = json::parse(holder.wait_for_line());
  Session session(options_for(server.connect));
  const std::string node = line.at("node");
  const auto data = session.get(node);
  ASSERT_TRUE(data.has_value()) << line.dump();
  EXPECT_EQ(line.at("path"), path);
  EXPECT_EQ(line.at("fencing_token"), std::to_string(data->stat.czxid));
  EXPECT_EQ(line.at("czxid"), data->stat.czxid);
  EXPECT_EQ(line.at("session_id"), hex_session(data->stat.ephemeral_owner));
  EXPECT_EQ(path + "/" + session.children(path)->front(), node);

  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
  EXPECT_FALSE(session.get(node).has_value()) << "hold exited without releasing";

  // The plain form: "TOKEN SEQUENCE NODE".
  Cli plain(dir, cli_args("hold", server.connect, {path}));
  std::istringstream fields(plain.wait_for_line());
  std::string token, sequence, plain_node;
  fields >> token >> sequence >> plain_node;
  const auto plain_data = session.get(plain_node);
  ASSERT_TRUE(plain_data.has_value()) << plain.output();
  EXPECT_EQ(token, std::to_string(plain_data->stat.czxid));
  EXPECT_GT(std::stoll(token), line.at("czxid").get<std::int64_t>()) << "tokens grow";
  EXPECT_EQ(std::stoi(plain_node.substr(plain_node.rfind("-lock-") + 6)), std::stoi(sequence));
  plain.signal(SIGINT);
  EXPECT_EQ(plain.wait(), 0) << plain.output();
}

// ---------------------------------------------------------------------------------------------
// Lost locks: a client cut off from the server (FaultProxy blackhole) with a short session timeout.

class CliLostLock : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // 200 ms ticks let 2 s and 4 s session timeouts through (the server allows 2..20 ticks).
    ServerOptions options;
    options.tick_ms = 200;
    options.min_session_timeout_ms = 1000;
    options.max_session_timeout_ms = 4000;
    server_ = ZkServer::start(options);
  }
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

  // B waits for the same lock, connected directly.
  Session session(options_for(server_->connect_string()));
  Cli b(dir,
        cli_args("exec", server_->connect_string(),
                 {path, "--", "sh", "-c", "echo b-acquired >> \"$EVENTS\""}),
        {"EVENTS=" + events});
  ASSERT_TRUE(wait_until([&] { return child_count(session, path) == 2; }, kEventTimeout))
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

// ---------------------------------------------------------------------------------------------
// status

TEST(CliStatus, ShowsTheQueueHolderFirstAsTextAndJson) {
  const auto server = shared_server();
  const TempDir dir;
  const auto path = unique_path("status");
  const std::vector<std::string> env = {"ZKLOCK_CONNECT=" + server.connect};  // no --connect
  Session session(options_for(server.connect));

  Cli holder(dir, {"hold", "--description", "the holder", path}, env);
  std::istringstream fields(holder.wait_for_line());
  std::string token, sequence, holder_node;
  fields >> token >> sequence >> holder_node;
  // Two waiters, queued one after the other so that their order is known.
  Cli first(dir, {"exec", "--description", "first \"waiter\"", path, "--", "true"}, env);
  ASSERT_TRUE(wait_until([&] { return child_count(session, path) == 2; }, kEventTimeout));
  Cli second(dir, {"exec", "--description", "second waiter", path, "--", "true"}, env);
  ASSERT_TRUE(wait_until([&] { return child_count(session, path) == 3; }, kEventTimeout));
  // A kazoo-named node with kazoo's kind of data (not zklock's JSON) queues last.
  const std::string kazoo_name = "0123456789abcdef0123456789abcdef__lock__0000000999";
  session.create(path + "/" + kazoo_name, "kazoo-identifier", CreateMode::kEphemeral);

  char host[256] = {};
  gethostname(host, sizeof host - 1);

  const auto as_json = run_cli(dir, {"status", "--json", path}, env);
  ASSERT_EQ(as_json.exit_code, 0) << as_json.output;
  const json status = json::parse(as_json.output);
  EXPECT_EQ(status.at("path"), path);
  const json& contenders = status.at("contenders");
  ASSERT_EQ(contenders.size(), 4u) << status.dump(2);
  const std::vector<std::string> descriptions = {"the holder", "first \"waiter\"", "second waiter"};
  const std::vector<pid_t> pids = {holder.pid(), first.pid(), second.pid()};
  std::set<std::string> sessions;
  for (size_t i = 0; i < 3; ++i) {
    const json& c = contenders[i];
    SCOPED_TRACE(c.dump());
    EXPECT_EQ(c.at("position"), i);
    EXPECT_EQ(c.at("holder"), i == 0);
    EXPECT_EQ(c.at("naming"), "protected");
    EXPECT_EQ(c.at("description"), descriptions[i]);
    EXPECT_EQ(c.at("pid"), pids[i]);
    EXPECT_EQ(c.at("host"), host);
    const auto node = session.get(path + "/" + c.at("name").get<std::string>());
    ASSERT_TRUE(node.has_value());
    EXPECT_EQ(c.at("czxid"), node->stat.czxid);
    EXPECT_EQ(c.at("session_id"), hex_session(node->stat.ephemeral_owner));
    EXPECT_EQ(c.at("data"), node->data);
    sessions.insert(c.at("session_id"));
    if (i > 0) {
      EXPECT_GT(c.at("sequence"), contenders[i - 1].at("sequence"));
    }
  }
  EXPECT_EQ(sessions.size(), 3u);
  EXPECT_EQ(path + "/" + contenders[0].at("name").get<std::string>(), holder_node);
  EXPECT_EQ(contenders[0].at("czxid").get<std::int64_t>(), std::stoll(token));
  const json& kazoo = contenders[3];
  EXPECT_EQ(kazoo.at("name"), kazoo_name);
  EXPECT_EQ(kazoo.at("naming"), "kazoo");
  EXPECT_EQ(kazoo.at("holder"), false);
  EXPECT_EQ(kazoo.at("data"), "kazoo-identifier");
  EXPECT_TRUE(kazoo.at("host").is_null());
  EXPECT_TRUE(kazoo.at("description").is_null());

  const auto as_text = run_cli(dir, {"status", path}, env);
  ASSERT_EQ(as_text.exit_code, 0) << as_text.output;
  const auto lines = lines_of(as_text.output);
  ASSERT_EQ(lines.size(), 5u) << as_text.output;
  EXPECT_NE(lines[0].find("4 contenders"), std::string::npos) << lines[0];
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(lines[i + 1]);
    const json& c = contenders[i];
    EXPECT_EQ(lines[i + 1].rfind(std::to_string(i) + (i == 0 ? " holder " : " waiting ") +
                                     c.at("name").get<std::string>(),
                                 0),
              0u);
    EXPECT_NE(lines[i + 1].find("czxid=" + std::to_string(c.at("czxid").get<std::int64_t>())),
              std::string::npos);
    EXPECT_NE(lines[i + 1].find("session=" + c.at("session_id").get<std::string>()),
              std::string::npos);
    if (i < 3) {
      EXPECT_NE(lines[i + 1].find("description=" + json(descriptions[i]).dump()),
                std::string::npos);
      EXPECT_NE(lines[i + 1].find("pid=" + std::to_string(pids[i])), std::string::npos);
    } else {
      EXPECT_NE(lines[i + 1].find("data=\"kazoo-identifier\""), std::string::npos);
    }
  }
  EXPECT_EQ(child_count(session, path), 4u) << "status must not queue";

  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
  EXPECT_EQ(first.wait(), 0) << first.output();
  EXPECT_EQ(second.wait(), 0) << second.output();
}

TEST(CliStatus, AbsentLockIsAnEmptyQueue) {
  const auto server = shared_server();
  const TempDir dir;
  const auto path = unique_path("absent");
  const auto as_json = run_cli(dir, cli_args("status", server.connect, {"--json", path}));
  ASSERT_EQ(as_json.exit_code, 0) << as_json.output;
  const json status = json::parse(as_json.output);
  EXPECT_EQ(status.at("path"), path);
  EXPECT_TRUE(status.at("contenders").empty());
  // Digest credentials (--user) are accepted by the server for any user: still just an empty queue.
  const auto as_text =
      run_cli(dir, cli_args("status", server.connect, {"--user", "alice:secret", path}));
  EXPECT_EQ(as_text.exit_code, 0) << as_text.output;
  EXPECT_NE(as_text.output.find("no contenders"), std::string::npos) << as_text.output;
}

// ---------------------------------------------------------------------------------------------
// help

TEST(CliHelp, MainAndCommandHelpExplainThemselves) {
  const TempDir dir;
  const auto main_help = run_cli(dir, {"--help"});
  EXPECT_EQ(main_help.exit_code, 0);
  for (const char* word : {"exec", "hold", "status", "Exit codes", "76", "ZKLOCK_CONNECT"}) {
    EXPECT_NE(main_help.output.find(word), std::string::npos) << word << "\n" << main_help.output;
  }
  const auto exec_help = run_cli(dir, {"exec", "--help"});
  EXPECT_EQ(exec_help.exit_code, 0);
  for (const char* word : {"LOCK_PATH -- COMMAND", "ZKLOCK_FENCING_TOKEN", "ZKLOCK_SESSION_ID",
                           "--on-lost", "--grace", "--timeout", "127", "Examples"}) {
    EXPECT_NE(exec_help.output.find(word), std::string::npos) << word << "\n" << exec_help.output;
  }
  const auto hold_help = run_cli(dir, {"hold", "--help"});
  EXPECT_EQ(hold_help.exit_code, 0);
  EXPECT_NE(hold_help.output.find("--json"), std::string::npos) << hold_help.output;
  const auto status_help = run_cli(dir, {"status", "--help"});
  EXPECT_EQ(status_help.exit_code, 0);
  EXPECT_NE(status_help.output.find("\"contenders\""), std::string::npos) << status_help.output;
  EXPECT_EQ(run_cli(dir, {}).exit_code, 64) << "no command is bad usage";
}

}  // namespace
}  // namespace zklock::testing
