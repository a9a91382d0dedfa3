// zklock::Semaphore::acquire(count) against a real server: several leases at once, all or none,
// one deadline; two calls that each want more than half of N take turns instead of each holding
// part and waiting for the other's rest; a cancel while waiting for the rest gives back what was
// taken.
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "test_env.h"
#include "waiter.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

class SemaphoreAcquireN : public ::testing::Test {
 protected:
  SemaphoreAcquireN() : server_(shared_server()), path_(unique_path("sem-n")) {}
  SessionOptions opts() const { return options_for(server_.connect); }
  // Waits until `count` lease nodes are under the semaphore, as `sem` lists them.
  static bool leases_are(const Semaphore& sem, std::size_t count) {
    return wait_until([&] { return sem.leases().size() == count; }, 10s);
  }

  const ServerRef server_;
  const std::string path_;
};

TEST_F(SemaphoreAcquireN, AllOrNoneWithinOneDeadline) {
  Session a(opts()), b(opts());
  Semaphore other(a, path_, 3), ours(b, path_, 3);
  std::vector<Lease> others = other.acquire(2);
  ASSERT_EQ(others.size(), 2u);
  EXPECT_NE(others[0].acquisition().node_path, others[1].acquisition().node_path);

  // One lease is free, two are asked for: none, and nothing of ours left behind.
  EXPECT_FALSE(ours.try_acquire_for(2, 1s).has_value());
  EXPECT_TRUE(leases_are(ours, 2)) << "a lease of the call that gave up was left";
  EXPECT_TRUE(lock_children(b, path_ + "/locks").empty());

  others[0].release();
  auto taken = ours.try_acquire_for(2, 30s);
  ASSERT_TRUE(taken.has_value());
  ASSERT_EQ(taken->size(), 2u);
  EXPECT_EQ((*taken)[0].state(), LockState::kHeld);
  EXPECT_EQ((*taken)[1].state(), LockState::kHeld);
  EXPECT_LT((*taken)[0].fencing_token(), (*taken)[1].fencing_token()) << "in the order taken";
  EXPECT_EQ(ours.leases().size(), 3u);
  EXPECT_FALSE(other.try_acquire()) << "N = 3 are held";
}

TEST_F(SemaphoreAcquireN, TwoCallsWantingMoreThanHalfTakeTurns) {
  // N = 2, both want 2: taking one lease at a time, each would hold one and wait for the other's.
  constexpr int kRounds = 3;
  std::atomic<int> inside{0}, max_inside{0}, failures{0};
  auto contender = [&] {
    Session s(opts());
    Semaphore sem(s, path_, 2);
    for (int i = 0; i < kRounds; ++i) {
      auto leases = sem.try_acquire_for(2, 60s);
      if (!leases || leases->size() != 2) {
        ++failures;
        return;
      }
      const int now = inside += 2;
      int seen = max_inside.load();
      while (now > seen && !max_inside.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(20ms);  // hold a while, so that the calls overlap
      inside -= 2;
    }
  };
  std::thread first(contender), second(contender);
  first.join();
  second.join();
  EXPECT_EQ(failures.load(), 0) << "a call gave up: the two waited on each other";
  EXPECT_EQ(max_inside.load(), 2);
}

TEST_F(SemaphoreAcquireN, ACancelWhileWaitingForTheRestGivesBackWhatWasTaken) {
  Session a(opts()), b(opts());
  Semaphore other(a, path_, 2), ours(b, path_, 2);
  Lease held = other.acquire();
  Waiter waiter([&] { ours.acquire(2); });
  // Our first lease is taken; the node of the second is there, waiting for a place.
  EXPECT_TRUE(leases_are(ours, 3));
  ours.cancel();  // also on failure: the waiter must end before the test does
  waiter.join();
  EXPECT_TRUE(waiter.cancelled()) << waiter.error();
  EXPECT_TRUE(leases_are(ours, 1)) << "the lease taken before the cancel was kept";
  EXPECT_EQ(held.state(), LockState::kHeld);
}

TEST_F(SemaphoreAcquireN, ACountOutsideOneToNIsRefused) {
  Session s(opts());
  Semaphore sem(s, path_, 3);
  EXPECT_THROW(sem.acquire(0), InvalidArgumentError);
  EXPECT_THROW(sem.acquire(4), InvalidArgumentError);
  EXPECT_THROW(sem.try_acquire_for(-1, 1s), InvalidArgumentError);
  EXPECT_TRUE(sem.leases().empty());
}

}  // namespace
}  // namespace zklock::testing
