// zklock::Semaphore against real servers, what it leaves behind: a lost create reply is adopted
// and a lost delete sent again, and a timeout, a cancel, destroying the Semaphore or closing the
// session leave no node and no watch - also when the internal lock's delete fails in a blip.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "held_lock.h"
#include "scripted_hook.h"
#include "semaphore_checks.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/testing/fault_hook.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

// ---- Lost replies.

TEST(SemaphoreTest, LostLeaseCreateReplyIsAdoptedNotDuplicated) {
  FaultedSession f("lostcreate", fault_on(Operation::kCreate, "-lease-",
                                          FaultDecision::lose_reply(Errc::connection_loss)));
  Semaphore sem(f.session, f.path, 2);
  Lease lease = sem.acquire();  // the create happened on the server; its reply was "lost"
  EXPECT_TRUE(f.hook.fired());
  const auto kids = lock_children(f.session, f.path + "/leases");
  ASSERT_EQ(kids.size(), 1u) << "an orphan or a duplicate lease node was left";
  EXPECT_EQ(f.path + "/leases/" + kids[0], lease.acquisition().node_path);
  EXPECT_EQ(lease.state(), LockState::kHeld);
  lease.release();
  EXPECT_TRUE(wait_until([&] { return lock_children(f.session, f.path + "/leases").empty(); }, 5s));
}

TEST(SemaphoreTest, LostReleaseReplyIsSentAgain) {
  FaultedSession f("lostdelete", fault_on(Operation::kDelete, "-lease-",
                                          FaultDecision::fail_before_send(Errc::connection_loss)));
  Semaphore sem(f.session, f.path, 1);
  Lease lease = sem.acquire();
  lease.release();  // noexcept; its delete "fails" on a connection loss and is sent again
  EXPECT_TRUE(f.hook.fired());
  EXPECT_TRUE(wait_until([&] { return lock_children(f.session, f.path + "/leases").empty(); }, 5s));
  EXPECT_TRUE(sem.try_acquire_for(5s));
}

// ---- Nothing left behind.

TEST(SemaphoreTest, TryAcquireForTimesOutAndLeavesNoNodeAndNoWatch) {
  HeldLease held("timeout");
  Session ws(options_for(held.server.connect));
  Semaphore waiter(ws, held.path, 1);
  const auto start = Clock::now();
  auto none = waiter.try_acquire_for(500ms);
  EXPECT_FALSE(none);
  EXPECT_GE(Clock::now() - start, 500ms);
  EXPECT_FALSE(waiter.try_acquire());
  EXPECT_FALSE(waiter.try_acquire_for(0ms));
  EXPECT_TRUE(wait_until([&] { return only_the_holders_lease_left(ws, held); }, 10s))
      << lock_children(ws, held.path + "/leases").size() << " leases, "
      << lock_children(ws, held.path + "/locks").size() << " lock nodes, "
      << watches_under(held.server.port, held.path).size() << " watched paths, "
      << child_watch_count(held.server.port) << " child watches";
  held.lease.release();
  auto got = waiter.try_acquire_for(10s);
  ASSERT_TRUE(got);
  got->release();
  EXPECT_TRUE(wait_until(
      [&] {
        return lock_children(ws, held.path + "/leases").empty() &&
               no_watches_at(held.server.port, held.path);
      },
      10s));
}

TEST(SemaphoreTest, CancelWakesWaitersInTheLockQueueAndInTheLeasePhase) {
  HeldLease held("cancel");
  Session ws(options_for(held.server.connect));
  Semaphore waiter(ws, held.path, 1);
  // Two threads on one Semaphore: one holds the internal lock (lease phase), one waits its turn.
  LeaseWaiter first(waiter), second(waiter);
  // Both calls must be inside before cancel(), which ends only the calls under way: the first's
  // lease is created, and the second is queued behind it in the internal lock. (On a slow
  // machine the second thread may otherwise call acquire() after cancel() and wait for good.)
  ASSERT_TRUE(
      wait_until([&] { return lock_children(ws, held.path + "/leases").size() == 2; }, 10s));
  ASSERT_TRUE(wait_until([&] { return lock_children(ws, held.path + "/locks").size() == 2; }, 10s));
  waiter.cancel();
  ASSERT_TRUE(wait_until([&] { return first.done() && second.done(); }, 10s));
  EXPECT_TRUE(first.cancelled()) << first.error();
  EXPECT_TRUE(second.cancelled()) << second.error();
  EXPECT_TRUE(wait_until([&] { return only_the_holders_lease_left(ws, held); }, 10s));
  // Later calls are not affected.
  held.lease.release();
  auto got = waiter.try_acquire_for(10s);
  EXPECT_TRUE(got);
}

TEST(SemaphoreTest, DestroyingTheSemaphoreCancelsWaitingThreads) {
  HeldLease held("destroy");
  Session ws(options_for(held.server.connect));
  auto waiter = std::make_unique<Semaphore>(ws, held.path, 1);
  std::atomic<int> cancelled{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&] {
      try {
        (void)waiter->acquire();
      } catch (const CancelledError&) {
        ++cancelled;
      }
    });
  }
  ASSERT_TRUE(
      wait_until([&] { return lock_children(ws, held.path + "/leases").size() == 2; }, 10s));
  waiter.reset();  // returns once every thread has left the object
  for (auto& t : threads) t.join();
  EXPECT_EQ(cancelled.load(), 3);
  EXPECT_TRUE(wait_until([&] { return only_the_holders_lease_left(ws, held); }, 10s));
}

TEST(SemaphoreTest, ClosingTheSessionFailsWaitersAndLosesLeases) {
  HeldLease held("close");
  auto ws = std::make_unique<Session>(options_for(held.server.connect));
  Semaphore waiter(*ws, held.path, 1);
  LeaseWaiter w(waiter);
  ASSERT_TRUE(wait_until(
      [&] { return lock_children(held.holder_session, held.path + "/leases").size() == 2; }, 10s));
  ws->close();
  ASSERT_TRUE(wait_until([&] { return w.done(); }, 10s));
  EXPECT_TRUE(w.failed());
  EXPECT_NE(w.error().find("closed"), std::string::npos) << w.error();
  held.holder_session.close();
  EXPECT_EQ(held.lease.state(), LockState::kLost);
  EXPECT_THROW((void)held.holder.acquire(), ClosedError);
  Session check(options_for(held.server.connect));
  EXPECT_TRUE(wait_until([&] { return lock_children(check, held.path + "/leases").empty(); }, 10s));
}

// Review 3, item 8, for the Semaphore: the internal lock's release is interrupted by a blip and
// the Semaphore destroyed right after acquire() returned. The internal lock's node must still go
// once the connection is back, or the whole semaphore is blocked for every client.
TEST(SemaphoreTest, ASemaphoreDestroyedWhileItsInternalLockDeleteFailsStillDeletesIt) {
  if (using_external_server()) GTEST_SKIP() << "freezes its own server";
  auto server = ZkServer::start();
  const std::string path = unique_path("sem-destroyed-in-blip");
  // The internal lock's delete is sent into a frozen server, and fails with the connection.
  auto scripted =
      one_shot_session(options_for(server->connect_string(), 6000ms),
                       [&](Operation op, std::string_view p) -> std::optional<FaultDecision> {
                         if (op != Operation::kDelete || p.find("/locks/") == p.npos)
                           return std::nullopt;
                         server->freeze();
                         return FaultDecision::fail_before_send(Errc::connection_loss);
                       });
  Session& s = *scripted.session;
  std::optional<Lease> lease;
  {
    Semaphore sem(s, path, 2);
    lease = sem.acquire();
  }
  ASSERT_TRUE(scripted.hook->fired());
  ASSERT_TRUE(wait_until([&] { return s.state() == SessionState::kSuspended; }, 10s));
  server->thaw();
  ASSERT_TRUE(wait_until([&] { return s.state() == SessionState::kConnected; }, 10s));
  Session other(options_for(server->connect_string()));
  EXPECT_TRUE(wait_until([&] { return lock_children(other, path + "/locks").empty(); }, 1s))
      << "left in the internal lock's queue: "
      << ::testing::PrintToString(lock_children(other, path + "/locks"));
  Semaphore sem(other, path, 2);
  EXPECT_TRUE(sem.try_acquire_for(3s)) << "a second lease is free, but the semaphore is blocked";
  lease.reset();
}

}  // namespace
}  // namespace zklock::testing
