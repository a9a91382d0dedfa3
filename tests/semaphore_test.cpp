// zklock::Semaphore against real servers: at most N holders (also across processes), session loss
// frees a lease, no herd, the stored lease count, timeouts, cancel and destruction leave nothing.
//
// The cross-process tests run this binary again as workers (SemaphoreChild.Run, selected with a
// gtest filter and configured through ZKLOCK_SEMAPHORE_CHILD); the workers count the holders in a
// shared memory file.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "held_lock.h"
#include "scripted_hook.h"
#include "semaphore_checks.h"
#include "support/fault_proxy.h"
#include "support/four_letter_words.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "test_env.h"
#include "waiter.h"
#include "zklock/testing/fault_hook.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

// The holders of one semaphore, counted by every process that uses it (a file mapped shared).
struct Tally {
  std::atomic<int> inside;
  std::atomic<int> max_inside;
  std::atomic<int> entries;
  std::atomic<int> workers_done;
};
static_assert(std::atomic<int>::is_always_lock_free, "cross-process atomics need lock-free ints");

class SharedTally {
 public:
  SharedTally(const std::string& file, bool create) {
    const int fd = ::open(file.c_str(), create ? (O_RDWR | O_CREAT | O_TRUNC) : O_RDWR, 0600);
    if (fd < 0) throw std::runtime_error("open " + file);
    if (create && ::ftruncate(fd, sizeof(Tally)) != 0) {
      ::close(fd);
      throw std::runtime_error("ftruncate " + file);
    }
    void* p = ::mmap(nullptr, sizeof(Tally), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) throw std::runtime_error("mmap " + file);
    tally_ = static_cast<Tally*>(p);  // zero-filled by ftruncate: every counter starts at 0
  }
  ~SharedTally() { ::munmap(tally_, sizeof(Tally)); }
  SharedTally(const SharedTally&) = delete;
  SharedTally& operator=(const SharedTally&) = delete;
  Tally& operator*() const { return *tally_; }
  Tally* operator->() const { return tally_; }

 private:
  Tally* tally_ = nullptr;
};

void enter(Tally& t) {
  const int now = t.inside.fetch_add(1) + 1;
  int seen = t.max_inside.load();
  while (now > seen && !t.max_inside.compare_exchange_weak(seen, now)) {
  }
  t.entries.fetch_add(1);
}
void leave(Tally& t) { t.inside.fetch_sub(1); }

// ---- The child side: "worker;<connect>;<path>;<N>;<iterations>;<tally file>" loops
// acquire / count / hold / release; "holder;<connect>;<path>;<N>;<marker file>" takes one lease,
// writes the marker and holds until it is killed.

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ';');) out.push_back(part);
  return out;
}

TEST(SemaphoreChild, Run) {
  const char* spec = std::getenv("ZKLOCK_SEMAPHORE_CHILD");
  if (spec == nullptr) GTEST_SKIP() << "runs only as a child of the semaphore tests";
  const auto args = split(spec);
  ASSERT_GE(args.size(), 5u);
  Session s(options_for(args[1], 2000ms));
  Semaphore sem(s, args[2], std::stoi(args[3]));
  if (args[0] == "holder") {
    Lease lease = sem.acquire();
    std::ofstream(args[4]) << lease.acquisition().node_path << "\n";
    // Hold until killed (the test's deadline ends a child that is never killed).
    EXPECT_FALSE(wait_until([] { return false; }, 120s, 100ms));
    return;
  }
  ASSERT_EQ(args[0], "worker");
  ASSERT_EQ(args.size(), 6u);
  const int n = std::stoi(args[3]);
  const int iterations = std::stoi(args[4]);
  SharedTally tally(args[5], false);
  for (int k = 0; k < iterations; ++k) {
    Lease lease = sem.acquire();
    ASSERT_EQ(lease.state(), LockState::kHeld);
    enter(*tally);
    if (k == 0) {
      // The first lease is held until N are held at once (or a deadline): the run then shows
      // that N may hold together, not only that no more than N do. Then until another process
      // has its lease node in and counts N + 1 (a broken count would let it in now), and a
      // little longer: it would enter while N still hold.
      wait_until([&] { return tally->max_inside.load() >= n; }, 30s, 2ms);
      wait_until([&] { return lock_children(s, args[2] + "/leases").size() > std::size_t(n); }, 30s,
                 5ms);
      std::this_thread::sleep_for(20ms);  // the work
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(2 + k % 3));  // the work
    }
    leave(*tally);
    lease.release();
  }
  tally->workers_done.fetch_add(1);
}

std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

std::unique_ptr<ChildProcess> spawn_child(const std::string& spec, const std::string& log) {
  SpawnOptions options;
  options.log_path = log;
  options.extra_env.push_back("ZKLOCK_SEMAPHORE_CHILD=" + spec);
  for (std::string& tls : tls_child_environment()) {  // over TLS when the parent is
    options.extra_env.push_back(std::move(tls));
  }
  return std::make_unique<ChildProcess>(
      std::vector<std::string>{self_exe(), "--gtest_filter=SemaphoreChild.Run"}, options);
}

// ---- Arguments and the stored count.

TEST(SemaphoreTest, BadArgumentsAreRejectedBeforeAnythingIsSent) {
  auto server = shared_server();
  Session s(options_for(server.connect));
  const std::string path = unique_path("args");
  EXPECT_THROW(Semaphore(s, path, 0), InvalidArgumentError);
  EXPECT_THROW(Semaphore(s, path, -3), InvalidArgumentError);
  for (const std::string& bad : {std::string(""), std::string("relative"), std::string("/"),
                                 std::string("/a/"), std::string("/zookeeper/x")}) {
    EXPECT_THROW(Semaphore(s, bad, 2), InvalidArgumentError) << "path: " << bad;
  }
  EXPECT_FALSE(s.get(path)) << "nothing may be sent before the first acquire";
}

TEST(SemaphoreTest, CountIsStoredAsTheSemaphoreNodesDataAndADifferentCountIsRefused) {
  auto server = shared_server();
  Session s(options_for(server.connect));
  const std::string path = unique_path("count");
  Semaphore two(s, path, 2);
  {
    Lease lease = two.acquire();
    EXPECT_EQ(lease.state(), LockState::kHeld);
  }
  const auto node = s.get(path);
  ASSERT_TRUE(node);
  EXPECT_EQ(node->data, "2");  // kazoo's representation: the count in decimal

  Semaphore three(s, path, 3);
  try {
    (void)three.acquire();
    ADD_FAILURE() << "a Semaphore with another count acquired a lease";
  } catch (const LeaseCountMismatchError& e) {
    EXPECT_EQ(e.errc(), Errc::lease_count_mismatch);
    EXPECT_NE(std::string(e.what()).find("2"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)three.try_acquire(), LeaseCountMismatchError);
  EXPECT_THROW((void)three.try_acquire_for(100ms), LeaseCountMismatchError);
  EXPECT_TRUE(lock_children(s, path + "/leases").empty());
  EXPECT_TRUE(lock_children(s, path + "/locks").empty());
  EXPECT_EQ(s.get(path)->data, "2");

  // Data that is not a count is refused too; an empty node (Curator's, kazoo's ensure_path) gets
  // ours.
  const std::string junk = unique_path("junk");
  s.create(junk, "not a number", CreateMode::kPersistent, true);
  Semaphore on_junk(s, junk, 2);
  EXPECT_THROW((void)on_junk.try_acquire(), LeaseCountMismatchError);
  const std::string empty = unique_path("empty");
  s.create(empty, "", CreateMode::kPersistent, true);
  Semaphore on_empty(s, empty, 4);
  EXPECT_TRUE(on_empty.try_acquire());
  EXPECT_EQ(s.get(empty)->data, "4");
}

// ---- Holders.

TEST(SemaphoreTest, NHoldersAtOnceThenTryAcquireFailsUntilOneIsReleased) {
  auto server = shared_server();
  Session s(options_for(server.connect));
  const std::string path = unique_path("n");
  SemaphoreOptions options;
  options.description = "n holders";
  Semaphore sem(s, path, 3, options);
  std::vector<Lease> held;
  for (int i = 0; i < 3; ++i) {
    auto lease = sem.try_acquire();
    ASSERT_TRUE(lease) << "lease " << i;
    held.push_back(std::move(*lease));
  }
  EXPECT_EQ(sem.leases().size(), 3u);
  EXPECT_FALSE(sem.try_acquire());
  const Acquisition a = held[1].acquisition();
  EXPECT_EQ(a.lock_path, path);
  EXPECT_EQ(a.node_path.rfind(path + "/leases/_c_", 0), 0u) << a.node_path;
  EXPECT_NE(a.node_path.find("-lease-"), std::string::npos) << a.node_path;
  const auto node = s.get(a.node_path);
  ASSERT_TRUE(node);
  EXPECT_EQ(node->stat.czxid, a.czxid);
  EXPECT_EQ(node->stat.ephemeral_owner, s.session_id());
  EXPECT_NE(node->data.find("n holders"), std::string::npos) << node->data;
  EXPECT_EQ(held[1].fencing_token(), FencingToken(a.czxid, a.sequence));
  EXPECT_LT(held[0].fencing_token(), held[2].fencing_token());

  // Moving a lease moves the hold; releasing one frees a place.
  Lease moved = std::move(held[0]);
  EXPECT_EQ(held[0].state(), LockState::kNotHeld);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.state(), LockState::kHeld);
  moved.release();
  EXPECT_EQ(moved.state(), LockState::kNotHeld);
  EXPECT_THROW(moved.acquisition(), Error);
  auto again = sem.try_acquire_for(10s);
  ASSERT_TRUE(again);
  EXPECT_EQ(sem.leases().size(), 3u);
  held.clear();
  again->release();
  EXPECT_TRUE(wait_until([&] { return sem.leases().empty(); }, 5s));
  EXPECT_TRUE(lock_children(s, path + "/locks").empty());
}

TEST(SemaphoreTest, NeverMoreThanNHoldersAcrossProcesses) {
  auto server = shared_server();
  const std::string path = unique_path("procs");
  TempDir dir;
  constexpr int kN = 2, kProcesses = 4, kIterations = 12;
  const std::string tally_file = dir.file("tally");
  SharedTally tally(tally_file, true);
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (int i = 0; i < kProcesses; ++i) {
    const std::string spec = "worker;" + server.connect + ";" + path + ";" + std::to_string(kN) +
                             ";" + std::to_string(kIterations) + ";" + tally_file;
    children.push_back(spawn_child(spec, dir.file("child" + std::to_string(i) + ".log")));
  }
  for (auto& child : children) {
    const auto status = child->wait_exit(120s);
    ASSERT_TRUE(status) << "a worker did not finish: " << tail_file(child->log_path());
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << describe_wait_status(*status) << "\n"
        << tail_file(child->log_path());
  }
  EXPECT_EQ(tally->workers_done.load(), kProcesses);
  EXPECT_EQ(tally->entries.load(), kProcesses * kIterations);
  EXPECT_LE(tally->max_inside.load(), kN) << "more than N holders at once";
  EXPECT_EQ(tally->max_inside.load(), kN) << "N holders were never inside together";
  Session s(options_for(server.connect));
  EXPECT_TRUE(wait_until([&] { return lock_children(s, path + "/leases").empty(); }, 10s));
  EXPECT_TRUE(lock_children(s, path + "/locks").empty());
  EXPECT_TRUE(wait_until([&] { return no_watches_at(server.port, path); }, 10s));
}

TEST(SemaphoreTest, NeverMoreThanNHoldersAcrossSessionsAndThreads) {
  auto server = shared_server();
  const std::string path = unique_path("threads");
  constexpr int kN = 3, kSessions = 6, kIterations = 10;
  Tally tally{};
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < kSessions; ++i) {
    threads.emplace_back([&] {
      try {
        Session s(options_for(server.connect));
        Semaphore sem(s, path, kN);
        for (int k = 0; k < kIterations; ++k) {
          Lease lease = sem.acquire();
          enter(tally);
          if (k == 0) {  // as in the processes' test
            wait_until([&] { return tally.max_inside.load() >= kN; }, 30s, 2ms);
            wait_until([&] { return lock_children(s, path + "/leases").size() > std::size_t(kN); },
                       30s, 5ms);
            std::this_thread::sleep_for(20ms);  // the work
          }
          std::this_thread::yield();
          leave(tally);
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(tally.entries.load(), kSessions * kIterations);
  EXPECT_LE(tally.max_inside.load(), kN);
  EXPECT_EQ(tally.max_inside.load(), kN);
}

// ---- Loss.

TEST(SemaphoreTest, HolderSessionLostFreesTheLeaseAfterTheHolderWasTold) {
  auto server = shared_server();
  const std::string path = unique_path("lost");
  auto proxy = FaultProxy::start("127.0.0.1", server.port);
  Session holder_session(options_for(proxy->connect_string(), 2000ms));
  Semaphore holder_sem(holder_session, path, 1);
  Lease lease = holder_sem.acquire();
  std::atomic<std::int64_t> told_lost_ns{0};
  std::thread watcher([&] {
    if (lease.wait_lost_for(60s)) told_lost_ns = Clock::now().time_since_epoch().count();
  });
  Session waiter_session(options_for(server.connect));
  Semaphore waiter_sem(waiter_session, path, 1);
  LeaseWaiter w(waiter_sem);
  ASSERT_TRUE(
      wait_until([&] { return lock_children(waiter_session, path + "/leases").size() == 2; }, 10s));
  proxy->blackhole();  // the server expires the holder's session after ~2 s
  ASSERT_TRUE(wait_until([&] { return w.acquired(); }, 20s)) << w.error();
  watcher.join();
  ASSERT_NE(told_lost_ns.load(), 0);
  EXPECT_LT(told_lost_ns.load(), w.acquired_at().time_since_epoch().count())
      << "the old holder was told after the new holder acquired";
  EXPECT_EQ(lease.state(), LockState::kLost);
  EXPECT_FALSE(lease.owns_lease());
  lease.release();
  EXPECT_EQ(lease.state(), LockState::kNotHeld);
  w.release();
  EXPECT_TRUE(
      wait_until([&] { return lock_children(waiter_session, path + "/leases").empty(); }, 10s));
}

TEST(SemaphoreTest, KilledHolderProcessFreesItsLease) {
  auto server = shared_server();
  const std::string path = unique_path("killed");
  TempDir dir;
  const std::string marker = dir.file("held");
  auto child =
      spawn_child("holder;" + server.connect + ";" + path + ";1;" + marker, dir.file("holder.log"));
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(marker); }, 60s))
      << tail_file(child->log_path());
  Session s(options_for(server.connect));
  Semaphore sem(s, path, 1);
  EXPECT_FALSE(sem.try_acquire());
  LeaseWaiter w(sem);
  ASSERT_TRUE(wait_until([&] { return lock_children(s, path + "/leases").size() == 2; }, 10s));
  child->kill();  // its session expires on the server after its 2 s timeout
  ASSERT_TRUE(wait_until([&] { return w.acquired(); }, 30s)) << w.error();
  EXPECT_EQ(lock_children(s, path + "/leases").size(), 1u);
  w.release();
}

// ---- No herd.

// Each waiter's state, for a failure message.
std::string describe(const std::vector<std::unique_ptr<LeaseWaiter>>& waiters) {
  std::string text;
  for (std::size_t i = 0; i < waiters.size(); ++i) {
    const LeaseWaiter& w = *waiters[i];
    text += (i ? ", waiter " : "waiter ") + std::to_string(i) + ": " +
            (w.acquired() ? "acquired"
             : !w.done()  ? "waiting"
                          : "failed (" + w.error() + ")");
  }
  return text;
}

TEST(SemaphoreTest, OnlyTheInternalLockHolderWatchesTheLeases) {
  HeldLease held("herd");
  constexpr int kWaiters = 3;
  // Destroyed in reverse: the Semaphores (cancelling whoever still waits), then the waiters.
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<LeaseWaiter>> waiters;
  std::vector<std::unique_ptr<Semaphore>> sems;
  for (int i = 0; i < kWaiters; ++i) {
    sessions.push_back(std::make_unique<Session>(options_for(held.server.connect)));
    sems.push_back(std::make_unique<Semaphore>(*sessions.back(), held.path, 1));
    waiters.push_back(std::make_unique<LeaseWaiter>(*sems.back()));
  }
  const std::string leases = held.path + "/leases";

  for (int round = 0; round < kWaiters; ++round) {
    // Everyone still waiting is queued: one holds the internal lock (and has its lease node),
    // the others wait in the internal lock's queue.
    const std::size_t waiting = static_cast<std::size_t>(kWaiters - round);
    ASSERT_TRUE(wait_until(
        [&] {
          return lock_children(held.holder_session, held.path + "/locks").size() == waiting &&
                 lock_children(held.holder_session, leases).size() == 2 &&
                 child_watch_count(held.server.port) == 1;
        },
        10s))
        << "round " << round << ": " << describe(waiters) << "; "
        << lock_children(held.holder_session, held.path + "/locks").size() << " queued, "
        << lock_children(held.holder_session, leases).size() << " lease nodes, "
        << child_watch_count(held.server.port) << " child watches on the server";
    // The other waiters each watch one predecessor's lock node (data watches), never the leases.
    EXPECT_EQ(watches_under(held.server.port, leases).size(), 0u);
    // Release the current lease: exactly one waiter gets in. The holders are picked before any
    // release: a waiter that gets in while the others are being released must keep its lease
    // (CI once released it too, letting the last waiter in a round early).
    if (round == 0) {
      held.lease.release();
    } else {
      std::vector<LeaseWaiter*> holders;
      for (auto& w : waiters) {
        if (w->acquired()) holders.push_back(w.get());
      }
      for (LeaseWaiter* w : holders) w->release();
    }
    ASSERT_TRUE(wait_until(
        [&] {
          return std::count_if(waiters.begin(), waiters.end(),
                               [](const auto& w) { return w->acquired(); }) == round + 1;
        },
        10s))
        << "round " << round << ": " << describe(waiters) << "; "
        << lock_children(held.holder_session, held.path + "/locks").size() << " queued, "
        << lock_children(held.holder_session, leases).size() << " lease nodes, "
        << child_watch_count(held.server.port) << " child watches on the server";
  }
  for (auto& w : waiters) w->release();
  EXPECT_TRUE(wait_until([&] { return lock_children(held.holder_session, leases).empty(); }, 10s));
  EXPECT_TRUE(wait_until([&] { return no_watches_at(held.server.port, held.path); }, 10s));
}

}  // namespace
}  // namespace zklock::testing
