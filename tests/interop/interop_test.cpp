// Interop: zklock::Mutex, Apache Curator's InterProcessMutex and python kazoo's
// Lock(extra_lock_patterns=["-lock-"]) contending on ONE lock path of a real server.
//
// Curator and kazoo run as child processes (CuratorContender.java, kazoo_contender.py, built and
// located by tests.cmake); zklock contenders are threads of this process, each with its own
// Session. Every contender follows the same protocol around its critical section: append
// "enter NAME <ns>" to a shared log, create a marker file exclusively (it already existing means
// two holders at once: "VIOLATION"), hold, delete the marker, append "exit NAME <ns>". The log
// then shows who held the lock when, in order.
//
// What each library sees of the others:
//   zklock  sees both other kinds of node (it parses "-lock-" and "__lock__" names);
//   kazoo   sees zklock's and Curator's "-lock-" nodes, thanks to extra_lock_patterns;
//   Curator sees zklock's nodes (same protected "-lock-" name) but NOT kazoo's: it sorts children
//           by the text after its "lock-" marker, and a kazoo name has none, so a kazoo node sorts
//           by its uuid hex - after every "-lock-" node. Curator never waits for a kazoo node
//           (pinned by CuratorIgnoresKazooNodes_KnownLimitation). So Curator and kazoo must not
//           share a lock path; the mixed mutual-exclusion tests pair zklock with one peer at a
//           time, and the three-library FIFO test places every Curator contender right behind a
//           "-lock-" node (which only goes after every kazoo node ahead of it).
//
// A peer that is not installed makes its tests skip - or fail, on CI or with
// ZKLOCK_INTEROP_REQUIRED (see peers_required()).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/four_letter_words.h"
#include "support/process.h"
#include "test_env.h"
#include "zklock/zklock.h"

#ifndef ZKLOCK_INTEROP_CURATOR_MISSING
#define ZKLOCK_INTEROP_CURATOR_MISSING \
  "Curator interop: not configured by tests/interop/tests.cmake"
#define ZKLOCK_INTEROP_JAVA ""
#define ZKLOCK_INTEROP_CLASSPATH ""
#define ZKLOCK_INTEROP_CURATOR_CLASS_FILE ""
#endif
#ifndef ZKLOCK_INTEROP_KAZOO_MISSING
#define ZKLOCK_INTEROP_KAZOO_MISSING "kazoo interop: not configured by tests/interop/tests.cmake"
#define ZKLOCK_INTEROP_PYTHON ""
#define ZKLOCK_INTEROP_KAZOO_SCRIPT ""
#endif

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Generous deadlines: they bound a failing test, a passing one never waits for them. A JVM start
// on a loaded 2-core machine can take several seconds.
constexpr auto kStartLimit = 60s;  // a child connected / its node queued
constexpr auto kRunLimit = 90s;    // a contender finished its iterations

// ---------------------------------------------------------------------------------------------
// Which peers are available.

// A missing peer fails instead of skipping when ZKLOCK_INTEROP_REQUIRED is set (not "0"), or on a
// CI machine (CI set, as CI services do) unless ZKLOCK_INTEROP_REQUIRED=0: CI installs every peer
// (scripts/deps.sh), so a skip there would hide a broken setup behind a green run.
bool peers_required() {
  auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' && std::string(v) != "0" && std::string(v) != "false";
  };
  const char* required = std::getenv("ZKLOCK_INTEROP_REQUIRED");
  if (required != nullptr && *required != '\0') return set("ZKLOCK_INTEROP_REQUIRED");
  return set("CI");
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

// Why Curator contenders cannot run here, or "" when they can. Configured-but-missing files are
// a broken build, not a missing peer: reported as such so that the test fails instead of skipping.
std::string curator_missing(bool* broken) {
  *broken = false;
  if (std::string reason = ZKLOCK_INTEROP_CURATOR_MISSING; !reason.empty()) return reason;
  if (!file_exists(ZKLOCK_INTEROP_CURATOR_CLASS_FILE) || !file_exists(ZKLOCK_INTEROP_JAVA)) {
    *broken = true;
    return std::string("Curator contender class or java missing: ") +
           ZKLOCK_INTEROP_CURATOR_CLASS_FILE + " / " + ZKLOCK_INTEROP_JAVA;
  }
  return "";
}

std::string kazoo_missing(bool* broken) {
  *broken = false;
  if (std::string reason = ZKLOCK_INTEROP_KAZOO_MISSING; !reason.empty()) return reason;
  if (!file_exists(ZKLOCK_INTEROP_KAZOO_SCRIPT) || !file_exists(ZKLOCK_INTEROP_PYTHON)) {
    *broken = true;
    return std::string("kazoo contender or its python missing: ") + ZKLOCK_INTEROP_KAZOO_SCRIPT +
           " / " + ZKLOCK_INTEROP_PYTHON;
  }
  return "";
}

// Skips the test when a peer is not installed; fails when it should have been (a broken build,
// CI, ZKLOCK_INTEROP_REQUIRED).
#define ZKLOCK_REQUIRE_PEER(missing_fn)                                  \
  do {                                                                   \
    bool zklock_broken_ = false;                                         \
    const std::string zklock_missing_ = missing_fn(&zklock_broken_);     \
    if (!zklock_missing_.empty()) {                                      \
      if (zklock_broken_ || peers_required()) FAIL() << zklock_missing_; \
      GTEST_SKIP() << zklock_missing_;                                   \
    }                                                                    \
  } while (0)

// ---------------------------------------------------------------------------------------------
// Files.

// A fresh directory for one test's log, marker and children's output; removed at the end.
class ScratchDir {
 public:
  ScratchDir() : path_(make_temp_dir("zklock-interop-")) {}
  ~ScratchDir() {
    std::error_code ec;
    if (!keep_test_dirs()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void touch(const std::string& path) {
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  ::close(fd);
}

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l == line) return true;
  }
  return false;
}

// The shared log, opened O_APPEND like the peers open it: one write(2) per line, so lines from
// different processes never mix.
class LogWriter {
 public:
  explicit LogWriter(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  }
  ~LogWriter() { ::close(fd_); }
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;
  void append(const std::string& what, const std::string& name) {
    // steady_clock is CLOCK_MONOTONIC, as are Java's nanoTime() and Python's monotonic_ns().
    const auto ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
            .count();
    const std::string line = what + " " + name + " " + std::to_string(ns) + "\n";
    if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      throw std::runtime_error("log write failed: " + std::string(std::strerror(errno)));
  }

 private:
  int fd_;
};

struct Event {
  std::string what;  // enter, exit, VIOLATION
  std::string name;
  long long ns = 0;
};

std::vector<Event> read_events(const std::string& path) {
  std::vector<Event> events;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) {
    Event e;
    std::istringstream fields(line);
    fields >> e.what >> e.name >> e.ns;
    events.push_back(e);
  }
  return events;
}

// The first way `events` is not a history of one holder at a time, each contender entering
// exactly as often as `expected_enters` says; "" when it is one.
std::string exclusion_problem(const std::vector<Event>& events,
                              const std::map<std::string, int>& expected_enters) {
  std::map<std::string, int> enters;
  long long last_ns = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const std::string at = "line " + std::to_string(i + 1) + " (" + e.what + " " + e.name + "): ";
    if (e.what == "VIOLATION") return at + "two holders at once";
    const bool want_enter = i % 2 == 0;
    if (e.what != (want_enter ? "enter" : "exit"))
      return at + "expected " + (want_enter ? "an enter" : "an exit") + " (overlapping holders)";
    if (!want_enter && e.name != events[i - 1].name)
      return at + "exit of someone who did not enter";
    if (expected_enters.count(e.name) == 0) return at + "unknown contender";
    // Each timestamp is taken inside the lock, before the write, on one machine-wide clock.
    if (e.ns < last_ns) return at + "time went backwards: holders overlapped";
    last_ns = e.ns;
    if (want_enter) ++enters[e.name];
  }
  if (events.size() % 2 != 0) return "the last holder never exited";
  for (const auto& [name, count] : expected_enters) {
    if (enters[name] != count)
      return name + " entered " + std::to_string(enters[name]) + " times, expected " +
             std::to_string(count);
  }
  return "";
}

std::vector<std::string> enter_order(const std::vector<Event>& events) {
  std::vector<std::string> names;
  for (const Event& e : events) {
    if (e.what == "enter") names.push_back(e.name);
  }
  return names;
}

std::string dump(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += "  " + s + "\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
// Contenders.

enum class Lib { kCurator, kKazoo, kZklock };

const char* lib_name(Lib lib) {
  switch (lib) {
    case Lib::kCurator:
      return "Curator";
    case Lib::kKazoo:
      return "kazoo";
    case Lib::kZklock:
      return "zklock";
  }
  return "?";
}

struct ContenderArgs {
  std::string connect;
  std::string lock_path;
  std::string log;  // shared event log; the marker is log + ".inside"
  std::string name;
  int iterations = 1;
  int hold_ms = 0;
  std::string start_file;  // peers wait for it after connecting (a common start line)
  std::string hold_until;  // hold the lock until this file exists
  bool queue_once = false;
};

ContenderArgs contender_args(const std::string& connect, const std::string& lock_path,
                             const std::string& log, const std::string& name, int iterations,
                             int hold_ms) {
  ContenderArgs a;
  a.connect = connect;
  a.lock_path = lock_path;
  a.log = log;
  a.name = name;
  a.iterations = iterations;
  a.hold_ms = hold_ms;
  return a;
}

// A Curator or kazoo contender process. Its stdout/stderr go to their own file.
class Peer {
 public:
  Peer(Lib lib, const ContenderArgs& a, std::string out_path)
      : lib_(lib), name_(a.name), out_path_(std::move(out_path)) {
    std::vector<std::string> argv;
    if (lib == Lib::kCurator) {
      // C1 only and a small serial heap: these JVMs live for seconds, on a shared 2-core machine.
      argv = {
          ZKLOCK_INTEROP_JAVA,      "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx64m", "-cp",
          ZKLOCK_INTEROP_CLASSPATH, "CuratorContender"};
    } else {
      argv = {ZKLOCK_INTEROP_PYTHON, "-B", ZKLOCK_INTEROP_KAZOO_SCRIPT};
    }
    for (const auto& s : {a.connect, a.lock_path, std::to_string(a.iterations), a.log, a.name,
                          std::to_string(a.hold_ms)}) {
      argv.push_back(s);
    }
    if (a.queue_once) argv.push_back("--queue-once");
    if (!a.start_file.empty()) argv.insert(argv.end(), {"--start-file", a.start_file});
    if (!a.hold_until.empty()) argv.insert(argv.end(), {"--hold-until", a.hold_until});
    SpawnOptions options;
    options.log_path = out_path_;
    process_ = std::make_unique<ChildProcess>(argv, options);
  }

  Lib lib() const { return lib_; }
  const std::string& name() const { return name_; }
  std::string output() const { return read_file(out_path_); }
  bool printed(const std::string& line) const { return has_line(output(), line); }
  ChildProcess& process() { return *process_; }
  std::string describe() const {
    return std::string(lib_name(lib_)) + " contender " + name_ + ", output:\n" + output();
  }

  // Waits until the contender printed `line`; false (at once) if it exited first.
  bool wait_printed(const std::string& line, std::chrono::milliseconds limit = kStartLimit) {
    return wait_until([&] { return printed(line) || !process_->running(); }, limit) &&
           printed(line);
  }

 private:
  Lib lib_;
  std::string name_;
  std::string out_path_;
  std::unique_ptr<ChildProcess> process_;
};

// Asserts that `peer` exits with `code` within `limit`.
void expect_exit(Peer& peer, int code, std::chrono::milliseconds limit = kRunLimit) {
  const auto status = peer.process().wait_exit(limit);
  ASSERT_TRUE(status.has_value()) << "still running after " << limit.count()
                                  << " ms: " << peer.describe();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == code)
      << describe_wait_status(*status) << ", expected exit " << code << ": " << peer.describe();
}

// A zklock contender: a thread with its own Session and Mutex, running the same protocol as the
// peer programs. The Session stays open until the object is destroyed, so that the server-side
// checks at the end of a test still see anything (a watch, a node) it might have left behind.
class ZklockContender {
 public:
  explicit ZklockContender(const ContenderArgs& a)
      : args_(a),
        session_(options_for(a.connect)),
        mutex_(session_, a.lock_path, mutex_options(a.name)) {
    thread_ = std::thread([this] { run(); });
  }
  ~ZklockContender() {
    {
      std::lock_guard lock(gate_mutex_);
      abort_ = go_ = true;
    }
    gate_.notify_all();
    if (!finished()) {
      mutex_.cancel();   // a lock() waiting now
      session_.close();  // and any later one (fails with ClosedError)
    }
    thread_.join();
  }
  ZklockContender(const ZklockContender&) = delete;
  ZklockContender& operator=(const ZklockContender&) = delete;

  // Starts the iterations (the thread waits for this, like the peers wait for the start file).
  void go() {
    {
      std::lock_guard lock(gate_mutex_);
      go_ = true;
    }
    gate_.notify_all();
  }
  // Waits for the iterations to end; returns "" on success, else what went wrong.
  std::string wait_done(std::chrono::milliseconds limit = kRunLimit) {
    if (!wait_until([&] { return finished(); }, limit)) return args_.name + ": still running";
    std::lock_guard lock(gate_mutex_);
    if (!error_.empty()) return args_.name + ": " + error_;
    if (completed_ != args_.iterations)
      return args_.name + ": completed " + std::to_string(completed_) + " iterations";
    return "";
  }
  Session& session() { return session_; }
  const std::string& name() const { return args_.name; }

 private:
  static MutexOptions mutex_options(const std::string& name) {
    MutexOptions o;
    o.description = name;  // in the node's JSON data
    return o;
  }
  bool finished() {
    std::lock_guard lock(gate_mutex_);
    return finished_;
  }
  void run() {
    std::string error;
    int completed = 0;
    try {
      {
        std::unique_lock lock(gate_mutex_);
        gate_.wait(lock, [&] { return go_; });
      }
      LogWriter log(args_.log);
      const std::string marker = args_.log + ".inside";
      for (int i = 0; i < args_.iterations && error.empty(); ++i) {
        {
          std::lock_guard lock(gate_mutex_);
          if (abort_) break;
        }
        std::unique_lock<Mutex> hold(mutex_);
        log.append("enter", args_.name);
        const int fd = ::open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) {
          const int err = errno;
          log.append("VIOLATION", args_.name);
          error = err == EEXIST ? "another holder was inside" : std::strerror(err);
          break;
        }
        ::close(fd);
        if (!args_.hold_until.empty()) {
          if (!wait_until([&] { return file_exists(args_.hold_until); }, kRunLimit))
            error = "hold-until timeout";
        } else {
          std::this_thread::sleep_for(
              std::chrono::milliseconds(args_.hold_ms));  // the work, not sync
        }
        ::unlink(marker.c_str());
        log.append("exit", args_.name);
        ++completed;
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard lock(gate_mutex_);
    error_ = error;
    completed_ = completed;
    finished_ = true;
  }

  const ContenderArgs args_;
  Session session_;
  Mutex mutex_;
  std::mutex gate_mutex_;
  std::condition_variable gate_;
  bool go_ = false;
  bool abort_ = false;
  bool finished_ = false;
  int completed_ = 0;
  std::string error_;
  std::thread thread_;  // last: started once everything above exists
};

// ---------------------------------------------------------------------------------------------
// Server-side views.

std::vector<std::string> at_or_under(const std::vector<std::string>& paths,
                                     const std::string& root) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (p == root || p.rfind(root + "/", 0) == 0) out.push_back(p);
  }
  return out;
}

std::vector<std::string> contender_names(const Mutex& m) {
  std::vector<std::string> names;
  for (const auto& c : m.contenders()) names.push_back(c.name);
  return names;
}

// At the end of a test: nothing of any contender is left on the server for this lock path - no
// node under it, no ephemeral, no watch (checked while the zklock Sessions are still open) - and
// then the path itself is removed.
void expect_lock_path_clean(Session& observer, int port, const std::string& path) {
  std::vector<std::string> left;
  // Immediate when every contender closed its session; a crashed one's node lasts until its
  // session times out (6 s for the peers).
  EXPECT_TRUE(wait_until(
      [&] {
        left = observer.children(path).value_or(std::vector<std::string>{});
        return left.empty();
      },
      20s))
      << "nodes left under " << path << ":\n"
      << dump(left);
  std::vector<std::string> watches;
  EXPECT_TRUE(wait_until(
      [&] {
        watches = at_or_under(watched_paths(port), path);
        return watches.empty();
      },
      10s))
      << "watches left at or under " << path << ":\n"
      << dump(watches);
  EXPECT_EQ(at_or_under(ephemeral_paths(port), path), std::vector<std::string>{});
  if (left.empty()) observer.remove(path);  // (else remove() would throw not_empty over the report)
}

// A new lock path (persistent, created up front so that no library creates it as a container
// that the server might delete mid-test).
std::string make_lock_path(Session& observer, const std::string& stem) {
  const std::string path = unique_path(stem);
  observer.create(path, "", CreateMode::kPersistent, /*make_parents=*/true);
  return path;
}

// ---------------------------------------------------------------------------------------------
// Mixed mutual exclusion: two peer processes of one library and two zklock threads, all looping
// on one path at once. No VIOLATION, strictly alternating enter/exit and increasing times in the
// shared log, everyone completed. A side that ignored the other side's nodes would hold together
// with it; the test also checks that the two libraries really did alternate (their activity
// overlapped), which is what makes "no overlap" mean something.
void run_mixed_exclusion(Lib peer_lib) {
  constexpr int kIterations = 15;
  constexpr int kHoldMs = 20;
  auto server = shared_server();
  ScratchDir dir;
  Session observer(options_for(server.connect));
  const std::string path = make_lock_path(observer, "interop-mixed");
  const std::string log = dir.file("events.log");
  const std::string start = dir.file("start");

  std::map<std::string, int> expected;
  std::map<std::string, Lib> lib_of;
  std::vector<std::unique_ptr<Peer>> peers;
  std::vector<std::unique_ptr<ZklockContender>> zklocks;
  for (int i = 1; i <= 2; ++i) {
    ContenderArgs a = contender_args(
        server.connect, path, log,
        std::string(peer_lib == Lib::kCurator ? "curator-" : "kazoo-") + std::to_string(i),
        kIterations, kHoldMs);
    a.start_file = start;
    peers.push_back(std::make_unique<Peer>(peer_lib, a, dir.file(a.name + ".out")));
    expected[a.name] = kIterations;
    lib_of[a.name] = peer_lib;
    a.name = "zklock-" + std::to_string(i);
    zklocks.push_back(std::make_unique<ZklockContender>(a));
    expected[a.name] = kIterations;
    lib_of[a.name] = Lib::kZklock;
  }
  // Everyone connected and at the start line, so that both libraries contend from the start
  // instead of one finishing before the other's process is up.
  for (auto& p : peers) ASSERT_TRUE(p->wait_printed("ready")) << p->describe();
  touch(start);
  for (auto& z : zklocks) z->go();

  for (auto& p : peers) expect_exit(*p, 0);
  for (auto& z : zklocks) EXPECT_EQ(z->wait_done(), "");

  const auto events = read_events(log);
  EXPECT_EQ(exclusion_problem(events, expected), "") << "log:\n" << read_file(log);
  const auto order = enter_order(events);
  int to_zklock = 0, to_peer = 0;
  for (std::size_t i = 1; i < order.size(); ++i) {
    const Lib from = lib_of[order[i - 1]], to = lib_of[order[i]];
    if (from != to) ++(to == Lib::kZklock ? to_zklock : to_peer);
  }
  EXPECT_GE(to_zklock, 1) << "no hand-over from " << lib_name(peer_lib) << " to zklock:\n"
                          << read_file(log);
  EXPECT_GE(to_peer, 1) << "no hand-over from zklock to " << lib_name(peer_lib) << ":\n"
                        << read_file(log);

  expect_lock_path_clean(observer, server.port, path);
}

TEST(InteropTest, CuratorAndZklockExcludeEachOther) {
  ZKLOCK_REQUIRE_PEER(curator_missing);
  run_mixed_exclusion(Lib::kCurator);
}

TEST(InteropTest, KazooAndZklockExcludeEachOther) {
  ZKLOCK_REQUIRE_PEER(kazoo_missing);
  run_mixed_exclusion(Lib::kKazoo);
}

// ---------------------------------------------------------------------------------------------
// FIFO across the three libraries. A zklock Mutex holds the lock; contenders of each library
// join the queue one at a time (each started only once the previous one's node exists, seen by
// zklock's contenders()); on release they acquire exactly in queue order. contenders() shows the
// queue with each node's naming and data. The order Curator, kazoo, zklock, Curator, ... puts
// every Curator contender right behind a zklock node (see the file comment: Curator would not
// wait for a kazoo node directly ahead of it).
TEST(InteropTest, QueueIsFifoAcrossLibraries) {
  ZKLOCK_REQUIRE_PEER(curator_missing);
  ZKLOCK_REQUIRE_PEER(kazoo_missing);
  auto server = shared_server();
  ScratchDir dir;
  Session observer(options_for(server.connect));
  const std::string path = make_lock_path(observer, "interop-fifo");
  const std::string log = dir.file("events.log");

  Session holder_session(options_for(server.connect));
  MutexOptions holder_options;
  holder_options.description = "holder";
  Mutex holder(holder_session, path, holder_options);
  holder.lock();
  const auto held = holder.acquisition();
  ASSERT_TRUE(held.has_value());
  const std::string holder_node = held->node_path.substr(path.size() + 1);

  const std::vector<std::pair<Lib, std::string>> plan = {
      {Lib::kCurator, "curator-1"}, {Lib::kKazoo, "kazoo-1"}, {Lib::kZklock, "zklock-1"},
      {Lib::kCurator, "curator-2"}, {Lib::kKazoo, "kazoo-2"}, {Lib::kZklock, "zklock-2"}};
  std::vector<std::unique_ptr<Peer>> peers;
  std::vector<std::unique_ptr<ZklockContender>> zklocks;
  std::vector<std::string> queue = {holder_node};  // node names in the order they joined
  std::map<std::string, int> expected;
  for (const auto& [lib, name] : plan) {
    const auto before = contender_names(holder);
    ASSERT_EQ(before, queue) << "the queue changed while nobody was joining";
    ContenderArgs a = contender_args(server.connect, path, log, name, 1, 5);
    a.queue_once = true;
    Peer* peer = nullptr;
    if (lib == Lib::kZklock) {
      zklocks.push_back(std::make_unique<ZklockContender>(a));
      zklocks.back()->go();
    } else {
      peers.push_back(std::make_unique<Peer>(lib, a, dir.file(name + ".out")));
      peer = peers.back().get();
    }
    expected[name] = 1;
    // Its node is in the queue before the next contender starts.
    std::vector<std::string> now;
    ASSERT_TRUE(wait_until(
        [&] {
          now = contender_names(holder);
          return now.size() > before.size() || (peer != nullptr && !peer->process().running());
        },
        kStartLimit))
        << name << " never queued" << (peer ? "; " + peer->describe() : "");
    ASSERT_EQ(now.size(), before.size() + 1) << name << ":\n"
                                             << dump(now) << (peer ? peer->describe() : "");
    ASSERT_TRUE(std::equal(before.begin(), before.end(), now.begin())) << "new node not last:\n"
                                                                       << dump(now);
    queue.push_back(now.back());
    // The contender's own report of its node agrees with the server's.
    if (peer != nullptr) {
      EXPECT_TRUE(peer->wait_printed("queued " + now.back())) << peer->describe();
    }
  }

  // zklock's view of the mixed queue: order, naming, data, owners.
  const auto contenders = holder.contenders();
  ASSERT_EQ(contenders.size(), queue.size());
  std::set<std::int64_t> owners;
  const std::regex kazoo_name("[0-9a-f]{32}__lock__[0-9]{10}");
  const std::regex protected_name("_c_[0-9a-f-]{36}-lock-[0-9]{10}");
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const Contender& c = contenders[i];
    SCOPED_TRACE("contender " + std::to_string(i) + ": " + c.name + " data " + c.data);
    EXPECT_EQ(c.name, queue[i]);
    const Lib lib = i == 0 ? Lib::kZklock : plan[i - 1].first;
    const std::string name = i == 0 ? "holder" : plan[i - 1].second;
    if (lib == Lib::kKazoo) {
      EXPECT_EQ(c.naming, NodeNaming::kKazoo);
      EXPECT_TRUE(std::regex_match(c.name, kazoo_name));
      EXPECT_EQ(c.data, name);  // kazoo's identifier
    } else {
      EXPECT_EQ(c.naming, NodeNaming::kProtected);
      EXPECT_TRUE(std::regex_match(c.name, protected_name));
      if (lib == Lib::kCurator) {
        EXPECT_EQ(c.data, name);  // the Curator client's default data
      } else {
        EXPECT_NE(c.data.find("\"lib\":\"zklock\""), std::string::npos);
        EXPECT_NE(c.data.find("\"description\":\"" + name + "\""), std::string::npos);
      }
    }
    if (i > 0) {
      EXPECT_GT(c.sequence, contenders[i - 1].sequence);
      EXPECT_GT(c.czxid, contenders[i - 1].czxid);
    }
    EXPECT_NE(c.ephemeral_owner, 0);
    owners.insert(c.ephemeral_owner);
  }
  EXPECT_EQ(contenders[0].ephemeral_owner, holder_session.session_id());
  EXPECT_EQ(contenders[0].sequence, held->sequence);
  EXPECT_EQ(contenders[0].czxid, held->czxid);
  EXPECT_EQ(owners.size(), contenders.size()) << "every contender has its own session";

  holder.unlock();
  for (auto& p : peers) expect_exit(*p, 0);
  for (auto& z : zklocks) EXPECT_EQ(z->wait_done(), "");

  const auto events = read_events(log);
  EXPECT_EQ(exclusion_problem(events, expected), "") << "log:\n" << read_file(log);
  std::vector<std::string> want;
  for (const auto& step : plan) want.push_back(step.second);
  EXPECT_EQ(enter_order(events), want) << "acquisitions out of queue order; log:\n"
                                       << read_file(log);

  expect_lock_path_clean(observer, server.port, path);
}

// ---------------------------------------------------------------------------------------------
// zklock and foreign holders/waiters: a Curator holder and a kazoo waiter are listed by zklock's
// contenders() with their naming and data; zklock's try_lock() refuses while either holds (and
// leaves no node behind); kazoo waits on the Curator node (its watch is on that node, seen on the
// server) and gets the lock only after Curator released it.
TEST(InteropTest, ContendersListsForeignHolderAndWaiter) {
  ZKLOCK_REQUIRE_PEER(curator_missing);
  ZKLOCK_REQUIRE_PEER(kazoo_missing);
  auto server = shared_server();
  ScratchDir dir;
  Session observer(options_for(server.connect));
  const std::string path = make_lock_path(observer, "interop-contenders");
  const std::string log = dir.file("events.log");

  ContenderArgs ca = contender_args(server.connect, path, log, "curator", 1, 0);
  ca.hold_until = dir.file("release-curator");
  Peer curator(Lib::kCurator, ca, dir.file("curator.out"));
  ASSERT_TRUE(wait_until(
      [&] { return !enter_order(read_events(log)).empty() || !curator.process().running(); },
      kStartLimit))
      << curator.describe();
  ASSERT_EQ(enter_order(read_events(log)), std::vector<std::string>{"curator"})
      << curator.describe();

  Session zs(options_for(server.connect));
  Mutex zm(zs, path);
  EXPECT_FALSE(zm.try_lock()) << "zklock took the lock while Curator held it";
  // try_lock() returns once its node is deleted again (the connection is up).
  EXPECT_EQ(observer.children(path).value_or(std::vector<std::string>{}).size(), 1u)
      << "a failed try_lock left its node";

  ContenderArgs ka = contender_args(server.connect, path, log, "kazoo", 1, 0);
  ka.hold_until = dir.file("release-kazoo");
  Peer kazoo(Lib::kKazoo, ka, dir.file("kazoo.out"));
  std::vector<Contender> cs;
  ASSERT_TRUE(wait_until(
      [&] {
        cs = zm.contenders();
        return cs.size() >= 2 || !kazoo.process().running();
      },
      kStartLimit))
      << kazoo.describe();
  ASSERT_EQ(cs.size(), 2u) << kazoo.describe();
  const Contender& c0 = cs[0];
  const Contender& c1 = cs[1];
  EXPECT_EQ(c0.naming, NodeNaming::kProtected);
  EXPECT_EQ(c0.name.rfind("_c_", 0), 0u) << c0.name;
  EXPECT_EQ(c0.data, "curator");
  EXPECT_TRUE(curator.printed("queued " + c0.name)) << curator.describe();
  EXPECT_EQ(c1.naming, NodeNaming::kKazoo);
  EXPECT_NE(c1.name.find("__lock__"), std::string::npos) << c1.name;
  EXPECT_EQ(c1.data, "kazoo");
  EXPECT_GT(c1.sequence, c0.sequence);
  EXPECT_GT(c1.czxid, c0.czxid);
  EXPECT_NE(c0.ephemeral_owner, 0);
  EXPECT_NE(c1.ephemeral_owner, 0);
  EXPECT_NE(c0.ephemeral_owner, c1.ephemeral_owner);
  EXPECT_NE(c0.ephemeral_owner, zs.session_id());

  // kazoo recognises the Curator node as its predecessor: it waits with a watch on it.
  const std::string curator_node = path + "/" + c0.name;
  EXPECT_TRUE(wait_until(
      [&] {
        const auto w = watched_paths(server.port);
        return std::find(w.begin(), w.end(), curator_node) != w.end();
      },
      kStartLimit))
      << "no watch on " << curator_node << "; watched:\n"
      << dump(watched_paths(server.port));
  EXPECT_EQ(enter_order(read_events(log)), std::vector<std::string>{"curator"});

  touch(ca.hold_until);
  expect_exit(curator, 0);
  ASSERT_TRUE(wait_until(
      [&] { return enter_order(read_events(log)).size() == 2 || !kazoo.process().running(); },
      kStartLimit))
      << kazoo.describe();
  EXPECT_FALSE(zm.try_lock()) << "zklock took the lock while kazoo held it";
  EXPECT_EQ(contender_names(zm), std::vector<std::string>{c1.name});

  touch(ka.hold_until);
  expect_exit(kazoo, 0);
  EXPECT_EQ(exclusion_problem(read_events(log), {{"curator", 1}, {"kazoo", 1}}), "")
      << read_file(log);
  EXPECT_EQ(enter_order(read_events(log)), (std::vector<std::string>{"curator", "kazoo"}));

  expect_lock_path_clean(observer, server.port, path);
}

// ---------------------------------------------------------------------------------------------
// Known limitation, pinned: Curator does not recognise kazoo's node names (it sorts children by
// the text after "lock-"; a kazoo name has none, so its uuid hex sorts after every "-lock-" node),
// and takes the lock while a kazoo contender holds it. zklock, on the same path, does respect the
// kazoo holder. If this test starts failing because Curator waited, Curator has learned kazoo's
// names: mix all three libraries in the mutual-exclusion test and drop the ordering caveat of
// QueueIsFifoAcrossLibraries.
TEST(InteropTest, CuratorIgnoresKazooNodes_KnownLimitation) {
  ZKLOCK_REQUIRE_PEER(curator_missing);
  ZKLOCK_REQUIRE_PEER(kazoo_missing);
  auto server = shared_server();
  ScratchDir dir;
  Session observer(options_for(server.connect));
  const std::string path = make_lock_path(observer, "interop-limitation");
  const std::string log = dir.file("events.log");

  ContenderArgs ka = contender_args(server.connect, path, log, "kazoo", 1, 0);
  ka.hold_until = dir.file("release-kazoo");
  Peer kazoo(Lib::kKazoo, ka, dir.file("kazoo.out"));
  ASSERT_TRUE(wait_until(
      [&] { return !enter_order(read_events(log)).empty() || !kazoo.process().running(); },
      kStartLimit))
      << kazoo.describe();

  Session zs(options_for(server.connect));
  Mutex zm(zs, path);
  EXPECT_FALSE(zm.try_lock()) << "zklock took the lock while kazoo held it";

  // Curator acquires at once despite the kazoo holder, finds the marker and reports VIOLATION.
  Peer curator(Lib::kCurator, contender_args(server.connect, path, log, "curator", 1, 0),
               dir.file("curator.out"));
  {
    SCOPED_TRACE("still running = Curator waited for the kazoo holder: the limitation is gone");
    expect_exit(curator, 3, kStartLimit);
  }
  const auto events = read_events(log);
  ASSERT_GE(events.size(), 3u) << read_file(log);
  EXPECT_EQ(events[0].what + " " + events[0].name, "enter kazoo");
  EXPECT_EQ(events[1].what + " " + events[1].name, "enter curator");
  EXPECT_EQ(events[2].what + " " + events[2].name, "VIOLATION curator");

  touch(ka.hold_until);
  expect_exit(kazoo, 0);
  expect_lock_path_clean(observer, server.port, path);
}

}  // namespace
}  // namespace zklock::testing
