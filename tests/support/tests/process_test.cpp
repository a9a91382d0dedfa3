// tests/support/tests/process_test.cpp: child processes of the tests (support/process.h) - how
// they start, report and stop, and that none outlives the test process however it ends.
//
// Each test asserts something that fails when the harness is broken.
#include "support/process.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/environment.h"
#include "support/files.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace zklock::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// =============================================================================================
// Helper roles. The cleanup tests re-execute this binary with ZKLOCK_HARNESS_ROLE set; the role
// runs during static initialisation, before GoogleTest, and never returns.
//
//   grandchild            clears its PR_SET_PDEATHSIG (so only the registry can kill it), writes
//                         its PID to ZKLOCK_HARNESS_PID_FILE, then idles (exits after 30 s at the
//                         latest, so a failing test leaks nothing for long).
//   grandchild-pdeathsig  the same, keeping PR_SET_PDEATHSIG.
//   abort | exit | wait   spawns a ChildProcess running ZKLOCK_HARNESS_GRANDCHILD_ROLE, waits for
//                         its PID file and then for ZKLOCK_HARNESS_GO_FILE to exist (the test has
//                         seen the grandchild alive), then abort()s / std::exit(0)s without
//                         destroying it / idles until killed.

std::string self_exe() { return fs::read_symlink("/proc/self/exe").string(); }

void write_pid_file(const std::string& path, pid_t pid) {
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << pid << "\n";
  fs::rename(tmp, path);  // atomic: readers never see a half-written file
}

// Returns the PID in `path` once the file exists, or -1 after `timeout`.
pid_t read_pid_file(const std::string& path, std::chrono::milliseconds timeout) {
  pid_t pid = -1;
  wait_until(
      [&] {
        std::ifstream in(path);
        return static_cast<bool>(in >> pid);
      },
      timeout);
  return pid;
}

[[noreturn]] void idle_for_at_most(std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(50ms);
  std::_Exit(0);
}

int run_helper_role() {
  const std::string role = env_or("ZKLOCK_HARNESS_ROLE");
  if (role.empty()) return 0;
  const std::string pid_file = env_or("ZKLOCK_HARNESS_PID_FILE");
  if (role == "grandchild" || role == "grandchild-pdeathsig") {
    if (role == "grandchild") prctl(PR_SET_PDEATHSIG, 0);
    write_pid_file(pid_file, getpid());
    idle_for_at_most(30s);
  }
  // Helper: spawn the grandchild, with the same variables but its own role.
  const std::string grandchild_role = env_or("ZKLOCK_HARNESS_GRANDCHILD_ROLE");
  SpawnOptions options;
  options.extra_env = {"ZKLOCK_HARNESS_ROLE=" + grandchild_role};
  static ChildProcess* grandchild = nullptr;  // never destroyed: cleanup is what is under test
  grandchild = new ChildProcess({self_exe()}, options);
  if (read_pid_file(pid_file, 10s) != grandchild->pid()) std::_Exit(3);
  const std::string go_file = env_or("ZKLOCK_HARNESS_GO_FILE");
  if (!wait_until([&] { return fs::exists(go_file); }, 20s)) std::_Exit(4);
  if (role == "abort") {
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    std::abort();
  }
  if (role == "exit") std::exit(0);  // NOLINT(concurrency-mt-unsafe): exit is the point
  idle_for_at_most(30s);             // "wait": the test SIGKILLs us
}

[[maybe_unused]] const int g_helper_role = run_helper_role();

// =============================================================================================
// ChildProcess

TEST(ChildProcessTest, StopSendsSigtermAndReaps) {
  ChildProcess child({"sleep", "30"});
  ASSERT_TRUE(child.running());
  ASSERT_TRUE(pid_alive(child.pid()));
  const int status = child.stop(5s);
  ASSERT_TRUE(WIFSIGNALED(status)) << describe_wait_status(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_FALSE(child.running());
  EXPECT_FALSE(pid_alive(child.pid()));
  EXPECT_FALSE(child.signal(SIGTERM)) << "signalling a reaped child must be refused";
}

TEST(ChildProcessTest, WaitExitReportsStatusOrTimesOut) {
  ChildProcess quick({"sh", "-c", "exit 3"});
  const auto status = quick.wait_exit(10s);
  ASSERT_TRUE(status.has_value());
  ASSERT_TRUE(WIFEXITED(*status)) << describe_wait_status(*status);
  EXPECT_EQ(WEXITSTATUS(*status), 3);

  ChildProcess slow({"sleep", "30"});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(slow.wait_exit(200ms).has_value());
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 2s);
  EXPECT_TRUE(slow.running());
  const int killed = slow.kill();
  EXPECT_TRUE(WIFSIGNALED(killed) && WTERMSIG(killed) == SIGKILL) << describe_wait_status(killed);
}

TEST(ChildProcessTest, StdoutAndStderrGoToTheLogFile) {
  TempDir dir("zklock-harness-test-");
  SpawnOptions options;
  options.log_path = dir.file("child.log");
  options.working_dir = dir.path();
  options.extra_env = {"ZKLOCK_HARNESS_GREETING=hello"};
  ChildProcess child({"sh", "-c", "echo \"$ZKLOCK_HARNESS_GREETING\"; echo oops >&2; pwd"},
                     options);
  ASSERT_TRUE(child.wait_exit(10s).has_value());
  const std::string log = read_file(options.log_path);
  EXPECT_NE(log.find("hello\n"), std::string::npos) << log;
  EXPECT_NE(log.find("oops\n"), std::string::npos) << log;
  EXPECT_NE(log.find(dir.path() + "\n"), std::string::npos) << log;
  // tail_file: the last 5 bytes are the end of pwd's output.
  EXPECT_EQ(tail_file(options.log_path, 5), dir.path().substr(dir.path().size() - 4) + "\n");
}

TEST(ChildProcessTest, MissingProgramThrows) {
  EXPECT_THROW(ChildProcess({"zklock-no-such-program-anywhere"}), std::runtime_error);
  EXPECT_THROW(ChildProcess({"/nonexistent/zklock-program"}), std::runtime_error);
  EXPECT_THROW(ChildProcess(std::vector<std::string>{}), std::invalid_argument);
}

TEST(ChildProcessTest, FrozenChildIsContinuedBeforeSigterm) {
  // A shell that exits 7 on SIGTERM: if stop() forgot SIGCONT, the frozen shell could not run
  // its trap, and only the SIGKILL after the grace period would end it. (`wait` returns as soon
  // as a trapped signal arrives.)
  ChildProcess child({"sh", "-c", "trap 'exit 7' TERM; sleep 30 & wait"});
  // The trap is installed once the background sleep has been exec'ed.
  const std::string proc = "/proc/" + std::to_string(child.pid());
  ASSERT_TRUE(wait_until(
      [&] {
        std::istringstream children(
            read_file(proc + "/task/" + std::to_string(child.pid()) + "/children"));
        std::string pid;
        while (children >> pid) {
          if (read_file("/proc/" + pid + "/comm") == "sleep\n") return true;
        }
        return false;
      },
      5s));
  child.freeze();
  EXPECT_TRUE(child.frozen());
  EXPECT_TRUE(child.running());
  EXPECT_TRUE(wait_until([&] { return process_stopped(child.pid()); }, 2s))
      << read_file(proc + "/stat");
  const auto start = std::chrono::steady_clock::now();
  const int status = child.stop(20s);
  ASSERT_TRUE(WIFEXITED(status)) << describe_wait_status(status);
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_FALSE(child.frozen());
}

TEST(ChildProcessTest, ChildOutlivesTheThreadThatSpawnedIt) {
  // PR_SET_PDEATHSIG fires when the forking *thread* exits; forks happen on the spawner thread,
  // so a child started from a short-lived thread must survive it.
  std::unique_ptr<ChildProcess> child;
  std::thread([&] {
    child = std::make_unique<ChildProcess>(std::vector<std::string>{"sleep", "30"});
  }).join();
  // Asserting that something does NOT happen: give a PDEATHSIG time to arrive.
  EXPECT_FALSE(child->wait_exit(300ms).has_value()) << "child died with the spawning thread";
  EXPECT_TRUE(child->running());
}

TEST(ChildProcessDeathTest, ForkedCopyThatAbortsSparesTheParentsChildren) {
  // A "fast" death test forks this process without exec: the copy inherits the registry and the
  // handlers. Its abort() must kill only what it spawned itself, and it must be able to spawn
  // (its own spawner thread: the parent's does not exist in the copy).
  GTEST_FLAG_SET(death_test_style, "fast");
  ChildProcess parents_child({"sleep", "30"});
  EXPECT_EXIT(
      {
        alarm(20);  // a hung spawn ends by SIGALRM, which fails the predicate below
        ChildProcess own({"true"});
        if (!own.wait_exit(10s)) _exit(1);
        std::abort();
      },
      ::testing::KilledBySignal(SIGABRT), "");
  EXPECT_TRUE(parents_child.running());
  EXPECT_TRUE(pid_alive(parents_child.pid()));
}

// Runs this binary as a helper with `role`, whose grandchild runs `grandchild_role`; once the
// grandchild is seen alive, lets the helper end (by itself, or SIGKILLed when `kill_helper`).
// Expects the helper to have ended as `ended_as_expected` says and the grandchild to die with it,
// which `how` explains.
void expect_grandchild_dies_with_helper(const std::string& role, const std::string& grandchild_role,
                                        bool kill_helper,
                                        const std::function<bool(int)>& ended_as_expected,
                                        const std::string& how) {
  TempDir dir("zklock-harness-test-");
  const std::string pid_file = dir.file("grandchild.pid");
  const std::string go_file = dir.file("go");
  SpawnOptions options;
  options.log_path = dir.file("helper.log");
  options.extra_env = {"ZKLOCK_HARNESS_ROLE=" + role, "ZKLOCK_HARNESS_PID_FILE=" + pid_file,
                       "ZKLOCK_HARNESS_GRANDCHILD_ROLE=" + grandchild_role,
                       "ZKLOCK_HARNESS_GO_FILE=" + go_file};
  ChildProcess helper({self_exe()}, options);
  const pid_t grandchild = read_pid_file(pid_file, 20s);
  ASSERT_GT(grandchild, 0) << "helper log:\n" << read_file(options.log_path);
  EXPECT_TRUE(pid_alive(grandchild)) << "grandchild died before its parent";
  write_file(go_file, "go\n");
  if (kill_helper) helper.kill();
  const auto status = helper.wait_exit(20s);
  ASSERT_TRUE(status.has_value()) << "helper did not exit";
  EXPECT_TRUE(ended_as_expected(*status)) << describe_wait_status(*status);
  EXPECT_TRUE(wait_until([&] { return !pid_alive(grandchild); }, 5s))
      << "pid " << grandchild << " survived: " << how;
}

TEST(ChildProcessCleanupTest, AbortingParentKillsItsChildren) {
  // The grandchild cleared its PDEATHSIG: only the SIGABRT handler's registry can kill it.
  expect_grandchild_dies_with_helper(
      "abort", "grandchild", false,
      [](int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT; },
      "the registry's SIGABRT handler did not kill it");
}

TEST(ChildProcessCleanupTest, ExitingParentKillsItsChildren) {
  // No destructor runs and PDEATHSIG is cleared: only the atexit handler can kill it.
  expect_grandchild_dies_with_helper(
      "exit", "grandchild", false,
      [](int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; },
      "the registry's atexit handler did not kill it");
}

TEST(ChildProcessCleanupTest, SigkilledParentsChildrenDieByPdeathsig) {
  // SIGKILL runs no handler at all: only the kernel's PDEATHSIG can kill it.
  expect_grandchild_dies_with_helper(
      "wait", "grandchild-pdeathsig", true,
      [](int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL; },
      "PR_SET_PDEATHSIG did not kill it");
}

}  // namespace
}  // namespace zklock::testing
