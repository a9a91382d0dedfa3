// tests/harness_test.cpp: tests of the test harness itself (tests/support): child processes and
// their cleanup, the four-letter-word reader and parsers, standalone servers and ensembles.
//
// Each test asserts something that fails when the harness is broken. The ZooKeeper C client is
// used directly (not zklock) to create sessions, ephemerals and watches that the server then shows.
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/four_letter_words.h"
#include "support/process.h"
#include "support/wait.h"
#include "support/zk_ensemble.h"
#include "support/zk_server.h"

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

// The environment variable `name`, "" when unset. (Only read: no thread calls setenv.)
std::string env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
  return value != nullptr ? value : "";
}

int run_helper_role() {
  const std::string role = env("ZKLOCK_HARNESS_ROLE");
  if (role.empty()) return 0;
  const std::string pid_file = env("ZKLOCK_HARNESS_PID_FILE");
  if (role == "grandchild" || role == "grandchild-pdeathsig") {
    if (role == "grandchild") prctl(PR_SET_PDEATHSIG, 0);
    write_pid_file(pid_file, getpid());
    idle_for_at_most(30s);
  }
  // Helper: spawn the grandchild, with the same variables but its own role.
  const std::string grandchild_role = env("ZKLOCK_HARNESS_GRANDCHILD_ROLE");
  SpawnOptions options;
  options.extra_env = {"ZKLOCK_HARNESS_ROLE=" + grandchild_role};
  static ChildProcess* grandchild = nullptr;  // never destroyed: cleanup is what is under test
  grandchild = new ChildProcess({self_exe()}, options);
  if (read_pid_file(pid_file, 10s) != grandchild->pid()) std::_Exit(3);
  const std::string go_file = env("ZKLOCK_HARNESS_GO_FILE");
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

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() : path_(make_temp_dir("zklock-harness-test-")) {}
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool contains(const std::vector<std::string>& haystack, const std::string& needle) {
  return std::find(haystack.begin(), haystack.end(), needle) != haystack.end();
}

// =============================================================================================
// A minimal ZooKeeper C client session (the library under test is not used here).

void ignore_events(zhandle_t*, int, int, const char*, void*) {}

class ZkClient {
 public:
  explicit ZkClient(const std::string& connect, int session_timeout_ms = 10000) {
    zoo_set_debug_level(static_cast<ZooLogLevel>(0));  // 0: silent (reconnect errors are expected)
    handle_ =
        zookeeper_init(connect.c_str(), ignore_events, session_timeout_ms, nullptr, nullptr, 0);
    if (handle_ == nullptr) throw std::runtime_error("zookeeper_init failed for " + connect);
  }
  ~ZkClient() { zookeeper_close(handle_); }
  ZkClient(const ZkClient&) = delete;
  ZkClient& operator=(const ZkClient&) = delete;

  bool connected() const { return zoo_state(handle_) == ZOO_CONNECTED_STATE; }
  bool wait_connected(std::chrono::milliseconds timeout = 15s) const {
    return wait_until([this] { return connected(); }, timeout);
  }
  int64_t session_id() const { return zoo_client_id(handle_)->client_id; }
  zhandle_t* get() const { return handle_; }

  int create(const std::string& path, int flags = 0, const std::string& data = "") {
    return zoo_create(handle_, path.c_str(), data.data(), static_cast<int>(data.size()),
                      &ZOO_OPEN_ACL_UNSAFE, flags, nullptr, 0);
  }
  int exists(const std::string& path) {
    Stat stat{};
    return zoo_exists(handle_, path.c_str(), 0, &stat);
  }

 private:
  zhandle_t* handle_ = nullptr;
};

// A znode-name prefix unique to this process and call: tests may share a server.
std::string unique_path(const std::string& name) {
  static std::atomic<int> counter{0};
  return "/zklock-harness-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" +
         name;
}

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
  TempDir dir;
  SpawnOptions options;
  options.log_path = dir.path() + "/child.log";
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
  std::string stat;
  EXPECT_TRUE(wait_until(
      [&] {
        stat = read_file(proc + "/stat");
        return stat[stat.rfind(')') + 2] == 'T';
      },
      2s))
      << stat;
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

// Runs this binary as a helper with `role`, whose grandchild runs `grandchild_role`. Returns the
// grandchild's PID once the helper has exited by itself (`kill_helper` false) or was SIGKILLed.
pid_t run_helper(const std::string& role, const std::string& grandchild_role, bool kill_helper,
                 int* helper_status) {
  TempDir dir;
  const std::string pid_file = dir.path() + "/grandchild.pid";
  const std::string go_file = dir.path() + "/go";
  SpawnOptions options;
  options.log_path = dir.path() + "/helper.log";
  options.extra_env = {"ZKLOCK_HARNESS_ROLE=" + role, "ZKLOCK_HARNESS_PID_FILE=" + pid_file,
                       "ZKLOCK_HARNESS_GRANDCHILD_ROLE=" + grandchild_role,
                       "ZKLOCK_HARNESS_GO_FILE=" + go_file};
  ChildProcess helper({self_exe()}, options);
  const pid_t grandchild = read_pid_file(pid_file, 20s);
  EXPECT_GT(grandchild, 0) << "helper log:\n" << read_file(options.log_path);
  if (grandchild > 0) {
    EXPECT_TRUE(pid_alive(grandchild)) << "grandchild died before its parent";
  }
  std::ofstream(go_file) << "go\n";
  if (kill_helper) helper.kill();
  const auto status = helper.wait_exit(20s);
  EXPECT_TRUE(status.has_value()) << "helper did not exit";
  *helper_status = status.value_or(-1);
  return grandchild;
}

TEST(ChildProcessCleanupTest, AbortingParentKillsItsChildren) {
  int status = 0;
  const pid_t grandchild = run_helper("abort", "grandchild", false, &status);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << describe_wait_status(status);
  // The grandchild cleared its PDEATHSIG: only the SIGABRT handler's registry can have killed it.
  EXPECT_TRUE(wait_until([&] { return !pid_alive(grandchild); }, 5s))
      << "pid " << grandchild << " survived the abort of its parent";
}

TEST(ChildProcessCleanupTest, ExitingParentKillsItsChildren) {
  int status = 0;
  const pid_t grandchild = run_helper("exit", "grandchild", false, &status);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe_wait_status(status);
  // No destructor ran and PDEATHSIG is cleared: the atexit handler did it.
  EXPECT_TRUE(wait_until([&] { return !pid_alive(grandchild); }, 5s))
      << "pid " << grandchild << " survived the exit of its parent";
}

TEST(ChildProcessCleanupTest, SigkilledParentsChildrenDieByPdeathsig) {
  int status = 0;
  const pid_t grandchild = run_helper("wait", "grandchild-pdeathsig", true, &status);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << describe_wait_status(status);
  // SIGKILL runs no handler at all: only the kernel's PDEATHSIG can have done it.
  EXPECT_TRUE(wait_until([&] { return !pid_alive(grandchild); }, 5s))
      << "pid " << grandchild << " survived the SIGKILL of its parent";
}

// =============================================================================================
// Four-letter words: parsers on outputs captured from a ZooKeeper 3.8.0 standalone server, with
// one session holding the ephemeral /eph and watches on /per (getData) and /nonexist (exists).

constexpr std::string_view kCapturedWchc = "0x1000006591d0000\n\t/nonexist\n\t/per\n\n";
constexpr std::string_view kCapturedWchp =
    "/nonexist\n\t0x1000006591d0000\n/per\n\t0x1000006591d0000\n\n";
constexpr std::string_view kCapturedDump =
    "SessionTracker dump:\nSession Sets (1)/(1):\n1 expire at Mon Nov 30 00:23:33 UTC 2026:\n"
    "\t0x1000006591d0000\nephemeral nodes dump:\nSessions with Ephemerals (1):\n"
    "0x1000006591d0000:\n\t/eph\nConnections dump:\nConnections Sets (2)/(2):\n"
    "0 expire at Mon Nov 30 00:23:32 UTC 2026:\n2 expire at Mon Nov 30 00:23:42 UTC 2026:\n"
    "\tip: /127.0.0.1:45072 sessionId: 0x0\n\tip: /127.0.0.1:52738 sessionId: 0x1000006591d0000\n";
constexpr std::string_view kCapturedMntrHead =
    "zk_version\t3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC\n"
    "zk_server_state\tstandalone\nzk_ephemerals_count\t1\nzk_num_alive_connections\t2\n"
    "zk_avg_latency\t4.8\nzk_watch_count\t2\n";
constexpr std::string_view kCapturedSrvr =
    "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC\n"
    "Latency min/avg/max: 0/4.8/13\nReceived: 12\nSent: 13\nConnections: 2\nOutstanding: 0\n"
    "Zxid: 0x3\nMode: standalone\nNode count: 7\n";
constexpr int64_t kCapturedSession = 0x1000006591d0000;

TEST(FourLetterWordsTest, ParsesCapturedOutputs) {
  const auto mntr = parse_mntr(kCapturedMntrHead);
  EXPECT_EQ(mntr.at("zk_server_state"), "standalone");
  EXPECT_EQ(mntr.at("zk_watch_count"), "2");
  EXPECT_EQ(mntr.at("zk_version"), "3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC");
  EXPECT_EQ(mntr.size(), 6u);

  EXPECT_EQ(parse_mode(kCapturedSrvr), "standalone");
  EXPECT_EQ(parse_mode("This ZooKeeper instance is not currently serving requests\n"), "");

  const WatchesBySession wchc = parse_wchc(kCapturedWchc);
  ASSERT_EQ(wchc.size(), 1u);
  EXPECT_EQ(wchc.at(kCapturedSession), (std::vector<std::string>{"/nonexist", "/per"}));

  const WatchesByPath wchp = parse_wchp(kCapturedWchp);
  ASSERT_EQ(wchp.size(), 2u);
  EXPECT_EQ(wchp.at("/per"), std::vector<int64_t>{kCapturedSession});
  EXPECT_EQ(wchp.at("/nonexist"), std::vector<int64_t>{kCapturedSession});

  // Only the ephemerals section counts, not the session-expiry or connection sections.
  const EphemeralsBySession dump = parse_dump_ephemerals(kCapturedDump);
  ASSERT_EQ(dump.size(), 1u);
  EXPECT_EQ(dump.at(kCapturedSession), std::vector<std::string>{"/eph"});

  EXPECT_TRUE(parse_wchc("").empty());
  EXPECT_TRUE(parse_wchp("\n").empty());
  EXPECT_TRUE(parse_dump_ephemerals("Sessions with Ephemerals (0):\nConnections dump:\n").empty());
}

TEST(FourLetterWordsTest, ParsesSessionIds) {
  EXPECT_EQ(parse_session_id("0x1000006591d0000"), kCapturedSession);
  EXPECT_EQ(parse_session_id("0x0"), 0);
  // Server ids >= 128 give negative session ids, as in the C client's clientid_t.
  EXPECT_EQ(parse_session_id("0xff00000000000001"), static_cast<int64_t>(0xff00000000000001ULL));
  EXPECT_EQ(parse_session_id("\t0xAbC"), 0xabc);
  EXPECT_FALSE(parse_session_id("1000006591d0000").has_value());
  EXPECT_FALSE(parse_session_id("0x").has_value());
  EXPECT_FALSE(parse_session_id("0x12g").has_value());
  EXPECT_FALSE(parse_session_id("0x10000000000000000").has_value());  // 17 digits
}

TEST(FourLetterWordsTest, UnreachableServerGivesEmptyQuickly) {
  const int port = pick_free_port();  // nothing listens there
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(try_four_letter_word(port, "ruok").has_value());
  EXPECT_EQ(four_letter_word(port, "ruok"), "");
  EXPECT_EQ(watch_count(port), -1);
  EXPECT_TRUE(watched_paths(port).empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << "connection refused must not wait";
}

TEST(PortPickingTest, PicksDistinctPortsBelowTheEphemeralRange) {
  const std::vector<int> ports = pick_free_ports(9);
  ASSERT_EQ(ports.size(), 9u);
  std::vector<int> sorted = ports;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  // Below the ephemeral range, no outgoing connection can take a port while its server is down.
  int ephemeral_low = 0;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low;
  for (int port : ports) {
    EXPECT_GT(port, 0);
    if (ephemeral_low > 12000) {
      EXPECT_LT(port, ephemeral_low);
    }
  }
}

// =============================================================================================
// Standalone server

TEST(ZkServerTest, StartsAndAnswersRuokAndMntr) {
  auto server = ZkServer::start();
  EXPECT_TRUE(server->running());
  EXPECT_TRUE(pid_alive(server->pid()));
  EXPECT_EQ(server->connect_string(), "127.0.0.1:" + std::to_string(server->port()));
  EXPECT_EQ(server->four_letter("ruok"), "imok");
  const auto mntr = parse_mntr(server->four_letter("mntr"));
  EXPECT_EQ(mntr.count("zk_version"), 1u);
  EXPECT_EQ(mntr.count("zk_server_state") ? mntr.at("zk_server_state") : "", "standalone");
  EXPECT_EQ(parse_mode(server->four_letter("srvr")), "standalone");
  EXPECT_EQ(watch_count(server->port()), 0);
  EXPECT_TRUE(fs::is_directory(server->data_dir()));
  EXPECT_NE(server->four_letter("conf").find("dataDir=" + server->data_dir()), std::string::npos);

  const std::string root = fs::path(server->data_dir()).parent_path().string();
  const pid_t pid = server->pid();
  server.reset();
  EXPECT_FALSE(pid_alive(pid));
  if (!keep_test_dirs()) {
    EXPECT_FALSE(fs::exists(root)) << "temporary directory left behind";
  }
}

TEST(ZkServerTest, RestartKeepsPortDataAndSessions) {
  auto server = ZkServer::start();
  const int port = server->port();
  const pid_t first_pid = server->pid();

  // A short session timeout: after a failed reconnect attempt the C client waits a fraction of it
  // (observed: up to ~2/3) before trying again, and the session must survive the downtime anyway.
  ZkClient client(server->connect_string(), 6000);
  ASSERT_TRUE(client.wait_connected());
  const int64_t session = client.session_id();
  ASSERT_EQ(client.create("/persistent"), ZOK);
  ASSERT_EQ(client.create("/ephemeral", ZOO_EPHEMERAL), ZOK);

  server->restart();
  EXPECT_EQ(server->port(), port);
  EXPECT_NE(server->pid(), first_pid);
  EXPECT_FALSE(pid_alive(first_pid));
  EXPECT_EQ(server->four_letter("ruok"), "imok");

  // The client reconnects to the same port and resumes its session: its ephemeral survives.
  ASSERT_TRUE(wait_until([&] { return client.exists("/ephemeral") == ZOK; }, 20s));
  EXPECT_EQ(client.session_id(), session);
  EXPECT_EQ(client.exists("/persistent"), ZOK);
  EXPECT_TRUE(contains(ephemeral_paths(port), "/ephemeral"));

  // A crash: committed data survives SIGKILL too (forceSync=no only skips fsync).
  ASSERT_EQ(client.create("/after-restart"), ZOK);
  server->kill();
  EXPECT_FALSE(server->running());
  EXPECT_EQ(server->four_letter("ruok"), "");
  server->restart();
  EXPECT_EQ(server->port(), port);
  ASSERT_TRUE(wait_until([&] { return client.exists("/after-restart") == ZOK; }, 20s));
  EXPECT_EQ(client.session_id(), session);
}

TEST(ZkServerTest, FreezeTimesOutFourLetterWordsThawRestoresAndStopWorks) {
  auto server = ZkServer::start();
  ASSERT_EQ(server->four_letter("ruok"), "imok");

  server->freeze();
  EXPECT_TRUE(server->running());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(try_four_letter_word(server->port(), "ruok", 500ms).has_value());
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 450ms) << "a frozen server cannot have answered or refused";
  EXPECT_LT(waited, 3s) << "the 4lw timeout was not honoured";
  EXPECT_EQ(server->four_letter("ruok", 200ms), "");

  server->thaw();
  EXPECT_TRUE(wait_until([&] { return server->four_letter("ruok") == "imok"; }, 10s));

  // A frozen server still stops promptly: stop() continues it so that it can act on SIGTERM
  // (otherwise only the SIGKILL after the 10 s grace period would end it).
  server->freeze();
  const auto stop_start = std::chrono::steady_clock::now();
  server->stop();
  EXPECT_FALSE(server->running());
  EXPECT_LT(std::chrono::steady_clock::now() - stop_start, 8s);
  EXPECT_EQ(server->four_letter("ruok"), "");
}

// =============================================================================================
// Shared server and live 4lw observations (also valid against ZKLOCK_TEST_CONNECT)

TEST(SharedServerTest, IsStartedOnceAndReused) {
  const ServerRef first = shared_server();
  const ServerRef second = shared_server();
  EXPECT_EQ(first.connect, second.connect);
  EXPECT_EQ(first.port, second.port);
  EXPECT_EQ(first.owned, second.owned);
  EXPECT_EQ(first.owned == nullptr, using_external_server());
  EXPECT_EQ(four_letter_word(first.port, "ruok"), "imok");
}

TEST(SharedServerTest, WatchesAndEphemeralsAreVisibleThroughFourLetterWords) {
  const ServerRef server = shared_server();
  const std::string ephemeral = unique_path("ephemeral");
  const std::string data = unique_path("data");
  const std::string absent = unique_path("absent");

  auto client = std::make_unique<ZkClient>(server.connect);
  ASSERT_TRUE(client->wait_connected());
  const int64_t session = client->session_id();
  ASSERT_EQ(client->create(ephemeral, ZOO_EPHEMERAL), ZOK);
  ASSERT_EQ(client->create(data), ZOK);
  std::array<char, 16> buffer{};
  int length = static_cast<int>(buffer.size());
  Stat stat{};
  ASSERT_EQ(
      zoo_wget(client->get(), data.c_str(), ignore_events, nullptr, buffer.data(), &length, &stat),
      ZOK);
  ASSERT_EQ(zoo_wexists(client->get(), absent.c_str(), ignore_events, nullptr, &stat), ZNONODE);

  // On a standalone server this is immediate; polling keeps it right on an external ensemble.
  EXPECT_TRUE(wait_until(
      [&] {
        const auto wchc = parse_wchc(four_letter_word(server.port, "wchc"));
        const auto it = wchc.find(session);
        return it != wchc.end() && contains(it->second, data) && contains(it->second, absent);
      },
      5s))
      << four_letter_word(server.port, "wchc");
  const auto wchp = parse_wchp(four_letter_word(server.port, "wchp"));
  ASSERT_EQ(wchp.count(data), 1u);
  EXPECT_EQ(wchp.at(data), std::vector<int64_t>{session});
  EXPECT_TRUE(contains(watched_paths(server.port), absent));
  EXPECT_GE(watch_count(server.port), 2);

  EXPECT_TRUE(wait_until([&] { return contains(ephemeral_paths(server.port), ephemeral); }, 5s));
  const auto dump = parse_dump_ephemerals(four_letter_word(server.port, "dump"));
  ASSERT_EQ(dump.count(session), 1u);
  EXPECT_TRUE(contains(dump.at(session), ephemeral));
  EXPECT_GE(mntr_value(server.port, "zk_ephemerals_count").value_or(0), 1);

  // Closing the session removes its ephemeral and watches on the server: the helpers see it.
  ASSERT_EQ(zoo_delete(client->get(), data.c_str(), -1), ZOK);
  client.reset();
  EXPECT_TRUE(wait_until(
      [&] {
        return !contains(ephemeral_paths(server.port), ephemeral) &&
               !contains(watched_paths(server.port), absent) &&
               parse_wchc(four_letter_word(server.port, "wchc")).count(session) == 0;
      },
      10s));
}

// =============================================================================================
// Ensemble

TEST(ZkEnsembleTest, ElectsNewLeaderAfterLeaderDiesAndSessionsSurvive) {
  auto ensemble = ZkEnsemble::start(3);
  ASSERT_EQ(ensemble->size(), 3);
  int leaders = 0;
  int followers = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string mode = ensemble->mode(i);
    leaders += mode == "leader";
    followers += mode == "follower";
    EXPECT_EQ(parse_mode(ensemble->four_letter(i, "srvr")), mode);
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_EQ(followers, 2);
  const std::string connect = ensemble->connect_string();
  EXPECT_EQ(std::count(connect.begin(), connect.end(), ','), 2);
  EXPECT_NE(connect.find(ensemble->node_connect_string(2)), std::string::npos);

  ZkClient client(connect, 10000);
  ASSERT_TRUE(client.wait_connected());
  const int64_t session = client.session_id();
  ASSERT_EQ(client.create("/ephemeral", ZOO_EPHEMERAL), ZOK);
  ASSERT_EQ(client.create("/data", 0, "v1"), ZOK);

  const int old_leader = ensemble->kill_leader();
  EXPECT_FALSE(ensemble->running(old_leader));
  EXPECT_EQ(ensemble->four_letter(old_leader, "ruok"), "");
  const auto killed_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(ensemble->wait_for_leader(30s));
  const int new_leader = ensemble->leader_index();
  EXPECT_GE(new_leader, 0);
  EXPECT_NE(new_leader, old_leader);
  std::printf("[          ] failover took %lld ms\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - killed_at)
                                         .count()));

  // The session survives the failover: writes work again, its ephemeral is still there, and the
  // new leader's dump lists it under the same session.
  ASSERT_TRUE(
      wait_until([&] { return zoo_set(client.get(), "/data", "v2", 2, -1) == ZOK; }, 20s, 50ms));
  EXPECT_EQ(client.session_id(), session);
  EXPECT_EQ(client.exists("/ephemeral"), ZOK);
  const auto dump = parse_dump_ephemerals(ensemble->four_letter(new_leader, "dump"));
  ASSERT_EQ(dump.count(session), 1u);
  EXPECT_TRUE(contains(dump.at(session), "/ephemeral"));

  // The old leader comes back as a follower of the new one.
  ensemble->restart(old_leader);
  EXPECT_TRUE(ensemble->running(old_leader));
  EXPECT_EQ(ensemble->mode(old_leader), "follower");
  EXPECT_EQ(ensemble->leader_index(), new_leader);

  // A frozen follower answers nothing, and comes back when thawed.
  const int follower = (new_leader + 1) % 3;
  ensemble->freeze(follower);
  EXPECT_TRUE(ensemble->running(follower));
  EXPECT_EQ(ensemble->four_letter(follower, "ruok", 300ms), "");
  EXPECT_EQ(ensemble->mode(follower), "");
  ensemble->thaw(follower);
  EXPECT_TRUE(wait_until([&] { return ensemble->four_letter(follower, "ruok") == "imok"; }, 10s));

  std::vector<pid_t> pids;
  pids.reserve(3);
  for (int i = 0; i < 3; ++i) pids.push_back(ensemble->pid(i));
  ensemble.reset();
  for (pid_t pid : pids) EXPECT_FALSE(pid_alive(pid)) << "node pid " << pid << " left running";
}

TEST(ZkEnsembleTest, RejectsBadArguments) {
  EXPECT_THROW(ZkEnsemble::start(0), std::invalid_argument);
}

}  // namespace
}  // namespace zklock::testing
