// Asynchronous Semaphore acquisition against real servers: Semaphore::async_acquire (one lease and
// several), acquire_future. No thread per waiter, at most N at once, FIFO, and every way a request
// can end - acquired, deadline (waiting for the internal lock, or holding it and waiting for a
// lease), cancel, an executor that drops the work, the session lost, Session::close(),
// ~Semaphore - completes the handler exactly once and leaves no node and no watch behind.
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "async_outcome.h"
#include "held_lock.h"
#include "scripted_hook.h"
#include "semaphore_checks.h"
#include "support/proc_status.h"
#include "test_env.h"
#include "zklock/testing/fault_hook.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct LeaseOutcome : AsyncOutcome<Lease> {
  bool acquired(std::chrono::milliseconds timeout = 10s) {
    return acquired_as([](const Lease& l) { return l.owns_lease(); }, timeout);
  }
};
using LeasesOutcome = AsyncOutcome<std::vector<Lease>>;

// Two sessions of the shared server, and a path of the test's own.
struct TwoSessions {
  explicit TwoSessions(const std::string& stem)
      : server(shared_server()),
        path(unique_path(stem)),
        s(options_for(server.connect)),
        other(options_for(server.connect)) {}
  const ServerRef server;
  const std::string path;
  Session s, other;
};

// Nothing of anyone under the semaphore `path` but `leases` lease nodes: nothing queued for the
// internal lock, no watch.
void expect_only_leases(Session& observer, int port, const std::string& path, std::size_t leases) {
  EXPECT_TRUE(wait_until([&] { return lock_children(observer, path + "/locks").empty(); }, 10s))
      << lock_children(observer, path + "/locks").size() << " nodes left in the internal lock";
  EXPECT_TRUE(
      wait_until([&] { return lock_children(observer, path + "/leases").size() == leases; }, 10s))
      << lock_children(observer, path + "/leases").size() << " lease nodes, not " << leases;
  EXPECT_TRUE(wait_until([&] { return no_watches_at(port, path); }, 10s))
      << watches_under(port, path).size() << " data watches left (or child watches)";
}

TEST(SemaphoreAsyncTest, HundredsOfRequestsOnOneSessionCostNoThreadAndAreServedInOrder) {
  auto server = shared_server();
  const std::string path = unique_path("hundreds");
  Session s(options_for(server.connect, 30000ms));
  constexpr int kLeases = 2;
#if defined(__SANITIZE_THREAD__)
  constexpr int kRequests = 60;
#else
  constexpr int kRequests = 200;
#endif
  Semaphore sem(s, path, kLeases);
  std::vector<Lease> first = sem.acquire(kLeases);  // everyone else queues behind these
  const std::int64_t threads_before = proc_status("Threads:");
  std::mutex mutex;
  std::vector<int> order;
  int failures = 0;
  for (int i = 0; i < kRequests; ++i) {
    sem.async_acquire([&, i](std::error_code error, Lease lease) {
      std::lock_guard lock(mutex);
      if (error) {
        ++failures;
        return;
      }
      order.push_back(i);
      lease.release();  // the next one's turn (released on the event thread: any thread may)
    });
  }
  ASSERT_TRUE(wait_until(
      [&] { return lock_children(s, path + "/locks").size() == std::size_t(kRequests); }, 60s));
  EXPECT_EQ(proc_status("Threads:"), threads_before) << "waiting requests must not cost threads";
  {
    std::lock_guard lock(mutex);
    EXPECT_TRUE(order.empty()) << "a third lease of two";
  }
  first.clear();  // both leases released
  ASSERT_TRUE(wait_until(
      [&] {
        std::lock_guard lock(mutex);
        return static_cast<int>(order.size()) + failures == kRequests;
      },
      120s));
  std::lock_guard lock(mutex);
  EXPECT_EQ(failures, 0);
  std::vector<int> expected(kRequests);
  for (int i = 0; i < kRequests; ++i) expected[i] = i;
  EXPECT_EQ(order, expected) << "not served in the order they queued";
  expect_only_leases(s, server.port, path, 0);
}

TEST(SemaphoreAsyncTest, ADeadlineEndsTheRequestOnceWithTimedOutAndLeavesNothing) {
  HeldLease held("deadline");
  Session s(options_for(held.server.connect));
  Semaphore sem(s, held.path, 1);
  // One waits for the internal lock behind the other, which holds it and waits for a lease.
  LeaseOutcome in_lease_phase, in_lock_queue, tried;
  const auto waiting = sem.async_acquire(in_lease_phase.handler(), AsyncLockOptions::within(1s));
  ASSERT_TRUE(wait_until([&] { return lock_children(s, held.path + "/leases").size() == 2; }, 10s))
      << "the first request never reached the lease phase";
  sem.async_acquire(in_lock_queue.handler(), AsyncLockOptions::within(300ms));
  sem.async_acquire(tried.handler(), AsyncLockOptions::within(0ms));  // one attempt
  ASSERT_TRUE(in_lock_queue.completed_with(Errc::timed_out));
  ASSERT_TRUE(tried.completed_with(Errc::timed_out));
  ASSERT_TRUE(in_lease_phase.completed_with(Errc::timed_out));
  EXPECT_FALSE(waiting.pending());
  waiting.cancel();  // too late: changes nothing
  expect_only_leases(held.holder_session, held.server.port, held.path, 1);
  EXPECT_TRUE(only_the_holders_lease_left(held.holder_session, held));
  EXPECT_EQ(in_lease_phase.count(), 1);
  EXPECT_EQ(in_lock_queue.count(), 1);
  EXPECT_EQ(tried.count(), 1);
}

TEST(SemaphoreAsyncTest, CancelEndsTheRequestOnceInEitherPhase) {
  HeldLease held("cancel");
  Session& s = held.holder_session;
  Semaphore sem(s, held.path, 1);
  LeaseOutcome in_lease_phase, in_lock_queue;
  const auto first = sem.async_acquire(in_lease_phase.handler());
  ASSERT_TRUE(wait_until([&] { return lock_children(s, held.path + "/leases").size() == 2; }, 10s));
  const auto second = sem.async_acquire(in_lock_queue.handler());
  ASSERT_TRUE(wait_until([&] { return lock_children(s, held.path + "/locks").size() == 2; }, 10s));
  EXPECT_TRUE(first.pending());
  EXPECT_TRUE(second.pending());
  second.cancel();
  ASSERT_TRUE(in_lock_queue.completed_with(Errc::cancelled));
  EXPECT_EQ(lock_children(s, held.path + "/locks").size(), 1U) << "gone before the handler ran";
  first.cancel();
  first.cancel();
  ASSERT_TRUE(in_lease_phase.completed_with(Errc::cancelled));
  EXPECT_EQ(lock_children(s, held.path + "/leases").size(), 1U) << "gone before the handler ran";
  EXPECT_TRUE(only_the_holders_lease_left(s, held));
  // The lease freed later goes to a new request, not to a cancelled one.
  LeaseOutcome later;
  sem.async_acquire(later.handler());
  held.lease.release();
  ASSERT_TRUE(later.acquired());
  EXPECT_EQ(in_lease_phase.count(), 1);
  EXPECT_EQ(in_lock_queue.count(), 1);
}

TEST(SemaphoreAsyncTest, SeveralLeasesAreAllOrNone) {
  TwoSessions two("several");
  auto& [server, path, s, other] = two;
  Semaphore sem(s, path, 3), theirs(other, path, 3);
  Lease one = theirs.acquire();
  LeasesOutcome too_many;
  sem.async_acquire(3, too_many.handler(), AsyncLockOptions::within(500ms));
  ASSERT_TRUE(too_many.completed_with(Errc::timed_out));
  {
    std::lock_guard lock(too_many.mutex);
    EXPECT_TRUE(too_many.value.empty());
  }
  expect_only_leases(s, server.port, path, 1);  // the two it had taken were given back
  LeasesOutcome all;
  sem.async_acquire(3, all.handler());
  one.release();
  ASSERT_TRUE(all.acquired_as([](const std::vector<Lease>& v) { return v.size() == 3; }));
  {
    std::lock_guard lock(all.mutex);
    for (const auto& lease : all.value) EXPECT_EQ(lease.state(), LockState::kHeld);
    all.value.clear();
  }
  expect_only_leases(s, server.port, path, 0);
  EXPECT_THROW(sem.async_acquire(4, all.handler()), InvalidArgumentError);
  EXPECT_THROW(sem.async_acquire(0, all.handler()), InvalidArgumentError);
  EXPECT_THROW(sem.async_acquire(LeaseHandler()), InvalidArgumentError);
}

TEST(SemaphoreAsyncTest, TheHandlerRunsOnTheExecutorAndDroppedWorkReleasesTheLease) {
  auto server = shared_server();
  const std::string path = unique_path("executor");
  Session s(options_for(server.connect));
  Semaphore sem(s, path, 1);
  std::atomic<int> dropped{0}, ran{0};
  AsyncLockOptions dropping;
  dropping.executor = [&](std::function<void()> work) {
    work = nullptr;  // a loop already shut down
    ++dropped;
  };
  for (int round = 0; round < 20; ++round) {
    sem.async_acquire([&](std::error_code, Lease) { ++ran; }, dropping);
    ASSERT_TRUE(wait_until([&] { return dropped.load() == round + 1; }, 10s));
    ASSERT_TRUE(wait_until([&] { return lock_children(s, path + "/leases").empty(); }, 10s))
        << "the dropped work's lease was not released (round " << round << ")";
  }
  EXPECT_EQ(ran.load(), 0);
  std::vector<std::function<void()>> queued;
  std::mutex queued_mutex;
  AsyncLockOptions queueing;
  queueing.executor = [&](std::function<void()> work) {
    std::lock_guard lock(queued_mutex);
    queued.push_back(std::move(work));
  };
  LeaseOutcome outcome;
  sem.async_acquire(outcome.handler(), queueing);
  ASSERT_TRUE(wait_until(
      [&] {
        std::lock_guard lock(queued_mutex);
        return queued.size() == 1;
      },
      10s));
  EXPECT_EQ(outcome.count(), 0) << "the handler ran before its executor ran it";
  std::function<void()> work;
  {
    std::lock_guard lock(queued_mutex);
    work = std::move(queued.front());
  }
  work();
  EXPECT_TRUE(outcome.acquired(1s));
}

TEST(SemaphoreAsyncTest, TheFutureFormThrowsWhatAcquireWouldThrow) {
  HeldLease held("future");
  Semaphore sem(held.holder_session, held.path, 1);
  auto timed = sem.acquire_future(AsyncLockOptions::within(100ms));
  try {
    (void)timed.get();
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.errc(), Errc::timed_out) << e.what();
  }
  Semaphore other_count(held.holder_session, held.path, 2);
  EXPECT_THROW((void)other_count.acquire_future().get(), LeaseCountMismatchError);
  auto later = sem.acquire_future(1, {});
  held.lease.release();
  auto leases = later.get();
  ASSERT_EQ(leases.size(), 1U);
  EXPECT_EQ(leases.front().state(), LockState::kHeld);
}

TEST(SemaphoreAsyncTest, SessionCloseAndSemaphoreDestructionEndWaitingRequests) {
  HeldLease held("close");
  LeaseOutcome by_destruction, by_close, after_close;
  {
    Session s(options_for(held.server.connect));
    {
      Semaphore sem(s, held.path, 1);
      sem.async_acquire(by_destruction.handler());
      ASSERT_TRUE(
          wait_until([&] { return lock_children(s, held.path + "/leases").size() == 2; }, 10s));
    }  // ~Semaphore: the request is cancelled
    ASSERT_TRUE(by_destruction.completed_with(Errc::cancelled));
    Semaphore sem(s, held.path, 1);
    sem.async_acquire(by_close.handler());
    ASSERT_TRUE(
        wait_until([&] { return lock_children(s, held.path + "/leases").size() == 2; }, 10s));
    expect_close_ends_requests(s, by_close, after_close,
                               [&] { sem.async_acquire(after_close.handler()); });
  }
  EXPECT_EQ(by_destruction.count(), 1);
  expect_only_leases(held.holder_session, held.server.port, held.path, 1);
}

TEST(SemaphoreAsyncTest, SessionLostWhileWaitingEndsWithSessionLost) {
  HeldLease held("lost");
  std::atomic<bool> silent{false};
  auto scripted = silenceable_session(options_for(held.server.connect, 2000ms), silent);
  Semaphore sem(*scripted.session, held.path, 1);
  LeaseOutcome outcome;
  sem.async_acquire(outcome.handler());
  ASSERT_TRUE(wait_until(
      [&] { return lock_children(held.holder_session, held.path + "/leases").size() == 2; }, 10s));
  silent = true;
  ASSERT_TRUE(outcome.completed_with(Errc::session_lost, 20s));
  silent = false;
  // Its nodes go with its old session (expired by the server); it did not queue again.
  expect_only_leases(held.holder_session, held.server.port, held.path, 1);
  EXPECT_EQ(outcome.count(), 1);
}

TEST(SemaphoreAsyncTest, BlockingAndAsynchronousContendersShareTheLeases) {
  TwoSessions two("mixed");
  Semaphore sem(two.s, two.path, 2), blocking(two.other, two.path, 2);
  std::vector<Lease> both = blocking.acquire(2);
  LeaseOutcome a, b;
  sem.async_acquire(a.handler());
  sem.async_acquire(b.handler());
  EXPECT_FALSE(a.acquired(300ms)) << "a third lease of two";
  both.pop_back();
  ASSERT_TRUE(a.acquired());
  EXPECT_FALSE(b.acquired(300ms));
  EXPECT_FALSE(blocking.try_acquire_for(200ms)) << "a blocking contender took a third";
  both.clear();
  ASSERT_TRUE(b.acquired());
  EXPECT_EQ(sem.leases().size(), 2U);
}

}  // namespace
}  // namespace zklock::testing
