// zklock::Semaphore and Apache Curator's InterProcessSemaphoreV2 on one path: they count each
// other's leases (one N for both), and under contention from both never more than N hold at once.
// The Curator side is CuratorSemaphoreContender.java, run as child processes.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/environment.h"
#include "support/files.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "test_env.h"
#include "zklock/zklock.h"

#ifndef ZKLOCK_SEM_CURATOR_MISSING
#define ZKLOCK_SEM_CURATOR_MISSING \
  "Curator semaphore interop: not configured by tests/interop/semaphore_tests.cmake"
#define ZKLOCK_SEM_JAVA ""
#define ZKLOCK_SEM_CLASSPATH ""
#define ZKLOCK_SEM_CLASS_FILE ""
#endif

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Skips without Curator - or fails, on a broken build, on CI or with ZKLOCK_INTEROP_REQUIRED.
#define REQUIRE_CURATOR()                                                                 \
  do {                                                                                    \
    std::string missing = ZKLOCK_SEM_CURATOR_MISSING;                                     \
    bool broken = false;                                                                  \
    if (missing.empty() && (!std::filesystem::exists(ZKLOCK_SEM_CLASS_FILE) ||            \
                            !std::filesystem::exists(ZKLOCK_SEM_JAVA))) {                 \
      missing = std::string("Curator semaphore contender class or java missing: ") +      \
                ZKLOCK_SEM_CLASS_FILE;                                                    \
      broken = true;                                                                      \
    }                                                                                     \
    if (!missing.empty()) {                                                               \
      if (broken || prerequisites_required("ZKLOCK_INTEROP_REQUIRED")) FAIL() << missing; \
      GTEST_SKIP() << missing;                                                            \
    }                                                                                     \
  } while (0)

// A Curator semaphore contender process; its stdout and stderr go to `out`.
class CuratorPeer {
 public:
  CuratorPeer(const std::string& connect, const std::string& path, int n, int iterations,
              const std::string& log, const std::string& name, int hold_ms, const std::string& out,
              const std::string& hold_until = "")
      : out_(out) {
    std::vector<std::string> argv = {ZKLOCK_SEM_JAVA,
                                     "-cp",
                                     ZKLOCK_SEM_CLASSPATH,
                                     "CuratorSemaphoreContender",
                                     connect,
                                     path,
                                     std::to_string(n),
                                     std::to_string(iterations),
                                     log,
                                     name,
                                     std::to_string(hold_ms)};
    if (!hold_until.empty()) {
      argv.push_back("--hold-until");
      argv.push_back(hold_until);
    }
    SpawnOptions options;
    options.log_path = out;
    process_ = std::make_unique<ChildProcess>(argv, options);
  }
  std::string output() const { return read_file(out_); }
  int count(const std::string& line) const {
    std::istringstream in(output());
    int n = 0;
    for (std::string l; std::getline(in, l);) n += l == line ? 1 : 0;
    return n;
  }
  ChildProcess& process() { return *process_; }

 private:
  std::string out_;
  std::unique_ptr<ChildProcess> process_;
};

// "enter NAME ns" / "exit NAME ns", one write(2) each on an O_APPEND file, as the Java side.
void append_event(const std::string& log, const std::string& what, const std::string& name) {
  const long long ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  const std::string line = what + " " + name + " " + std::to_string(ns) + "\n";
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  ::close(fd);
}

struct Sweep {
  int enters = 0;
  int exits = 0;
  int most_inside = 0;
};

// Merges every contender's enters and exits by their monotonic time: the most inside at once.
Sweep sweep(const std::string& log) {
  struct Ev {
    long long ns;
    int delta;
  };
  std::vector<Ev> events;
  Sweep s;
  std::istringstream in(read_file(log));
  for (std::string what, name; in >> what >> name;) {
    long long ns = 0;
    in >> ns;
    if (what == "enter") {
      events.push_back({ns, +1});
      ++s.enters;
    } else if (what == "exit") {
      events.push_back({ns, -1});
      ++s.exits;
    }
  }
  // At one timestamp, enters first: a tie can only overstate the count.
  std::sort(events.begin(), events.end(), [](const Ev& a, const Ev& b) {
    return a.ns != b.ns ? a.ns < b.ns : a.delta > b.delta;
  });
  int inside = 0;
  for (const auto& e : events) s.most_inside = std::max(s.most_inside, inside += e.delta);
  return s;
}

TEST(SemaphoreInteropTest, CuratorAndZklockCountEachOthersLeases) {
  REQUIRE_CURATOR();
  auto server = shared_server();
  const std::string path = unique_path("sem-curator");
  TempDir dir;
  const std::string release = dir.file("release");
  Session s(options_for(server.connect));
  Semaphore sem(s, path, 2);

  // Curator takes one of the two leases and holds it.
  CuratorPeer holder(server.connect, path, 2, 1, dir.file("log"), "curator-1", 0,
                     dir.file("curator-1.out"), release);
  ASSERT_TRUE(wait_until([&] { return holder.count("held") == 1; }, 60s)) << holder.output();
  // zklock counts it: one lease is left, and it is ours.
  auto mine = sem.try_acquire_for(10s);
  ASSERT_TRUE(mine);
  EXPECT_EQ(sem.leases().size(), 2u);
  EXPECT_FALSE(sem.try_acquire()) << "zklock took a third lease beside Curator's and its own";

  // A second Curator client counts ours: it creates its lease node and waits.
  CuratorPeer waiter(server.connect, path, 2, 1, dir.file("log"), "curator-2", 0,
                     dir.file("curator-2.out"));
  ASSERT_TRUE(wait_until([&] { return sem.leases().size() == 3; }, 60s)) << waiter.output();
  EXPECT_EQ(waiter.count("held"), 0) << "Curator took a third lease beside zklock's";
  // Our release wakes it.
  mine->release();
  ASSERT_TRUE(wait_until([&] { return waiter.count("held") == 1; }, 30s)) << waiter.output();
  const auto status = waiter.process().wait_exit(30s);
  ASSERT_TRUE(status) << waiter.output();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << waiter.output();

  // Curator stores no count; the count zklock stored is left alone by Curator.
  EXPECT_EQ(s.get(path)->data, "2");
  std::ofstream(release) << "go\n";
  const auto held_status = holder.process().wait_exit(30s);
  ASSERT_TRUE(held_status) << holder.output();
  EXPECT_TRUE(WIFEXITED(*held_status) && WEXITSTATUS(*held_status) == 0) << holder.output();
  EXPECT_TRUE(wait_until([&] { return sem.leases().empty(); }, 10s));
  EXPECT_TRUE(lock_children(s, path + "/locks").empty());
}

TEST(SemaphoreInteropTest, NeverMoreThanNHoldersAmongCuratorAndZklock) {
  REQUIRE_CURATOR();
  auto server = shared_server();
  const std::string path = unique_path("sem-mixed");
  TempDir dir;
  const std::string log = dir.file("log");
  constexpr int kN = 2, kIterations = 10, kHoldMs = 5;
  std::vector<std::unique_ptr<CuratorPeer>> peers;
  for (int i = 0; i < 2; ++i) {
    const std::string name = "curator-" + std::to_string(i);
    peers.push_back(std::make_unique<CuratorPeer>(server.connect, path, kN, kIterations, log, name,
                                                  kHoldMs, dir.file(name + ".out")));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      try {
        Session s(options_for(server.connect));
        Semaphore sem(s, path, kN);
        const std::string name = "zklock-" + std::to_string(i);
        for (int k = 0; k < kIterations; ++k) {
          Lease lease = sem.acquire();
          append_event(log, "enter", name);
          std::this_thread::sleep_for(std::chrono::milliseconds(kHoldMs));  // the work
          append_event(log, "exit", name);
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& peer : peers) {
    const auto status = peer->process().wait_exit(120s);
    ASSERT_TRUE(status) << peer->output();
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << peer->output();
  }
  EXPECT_EQ(failures.load(), 0);
  const Sweep s = sweep(log);
  EXPECT_EQ(s.enters, 4 * kIterations);
  EXPECT_EQ(s.exits, 4 * kIterations);
  EXPECT_LE(s.most_inside, kN) << "more than N holders at once";
  std::cout << "[   INFO   ] " << s.enters << " leases taken by 2 Curator processes and 2 zklock "
            << "sessions, at most " << s.most_inside << " held at once (N = " << kN << ")\n";
  Session check(options_for(server.connect));
  EXPECT_TRUE(wait_until([&] { return lock_children(check, path + "/leases").empty(); }, 10s));
  EXPECT_TRUE(lock_children(check, path + "/locks").empty());
}

}  // namespace
}  // namespace zklock::testing
