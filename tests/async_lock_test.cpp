// Asynchronous acquisition against real servers: Mutex::async_lock / lock_future and the
// SharedMutex forms. No thread per waiter, FIFO, and every way a request can end - acquired,
// deadline, cancel, session lost (fault hook and frozen server), Session::close(), ~Mutex -
// completes the handler exactly once and leaves no node and no watch behind.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "async_outcome.h"
#include "held_lock.h"
#include "lost_reports.h"
#include "run_with_deadline.h"
#include "scripted_hook.h"
#include "support/proc_status.h"
#include "test_env.h"
#include "zklock/testing/fault_hook.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Records every completion of one request: how many times, with what, and the Hold.
struct Outcome : AsyncOutcome<Hold> {
  LockHandler handler() { return AsyncOutcome<Hold>::handler(); }
  bool acquired(std::chrono::milliseconds timeout = 10s) {
    return acquired_as([](const Hold& h) { return h.owns_lock(); }, timeout);
  }
};

// Nothing of anyone under `path`: no node, no watch.
void expect_clean(Session& observer, int port, const std::string& path) {
  EXPECT_TRUE(wait_until([&] { return lock_children(observer, path).empty(); }, 10s))
      << lock_children(observer, path).size() << " nodes left";
  EXPECT_TRUE(wait_until([&] { return watches_under(port, path).empty(); }, 10s))
      << watches_under(port, path).size() << " watches left";
}

// A thousand requests of one Mutex on one session, with the default test session timeout: they
// queue with a few shared listings (not one each), are handed the lock down the queue on deletion
// events alone (no listing per wake), in FIFO order, with no thread each - and the session, whose
// one connection and completion thread carry all of it, stays Connected throughout.
TEST(AsyncLockTest, ThousandWaitersOnOneSessionAndNoExtraThreadDrainInFifoOrder) {
  auto server = shared_server();
  const std::string path = unique_path("thousand");
  auto scripted = scripted_session(options_for(server.connect), nullptr);
  Session& s = *scripted.session;
  std::atomic<int> suspended_or_lost{0};
  s.add_listener([&](const SessionEvent& e) {
    if (e.state == SessionState::kSuspended || e.state == SessionState::kLost) ++suspended_or_lost;
  });
  Session observer(options_for(server.connect));  // counts the queue, made before the threads
  Mutex m(s, path);
  m.lock();  // the first holder: everyone else queues behind it
  constexpr int kWaiters = 1000;
  const std::int64_t threads_before = proc_status("Threads:");
  const int listings_before = scripted.hook->count(Operation::kGetChildren);
  std::mutex order_mutex;
  std::vector<int> order;
  std::atomic<int> failures{0};
  for (int i = 0; i < kWaiters; ++i) {
    m.async_lock([&, i](std::error_code error, Hold hold) {
      if (error) {
        ++failures;
        return;
      }
      std::lock_guard lock(order_mutex);
      order.push_back(i);
      hold.unlock();  // the next one's turn (released on the event thread: any thread may)
    });
  }
  ASSERT_TRUE(wait_until(
      [&] {
        const auto node = observer.get(path);
        return node && node->stat.num_children == kWaiters + 1;
      },
      60s));
  EXPECT_EQ(proc_status("Threads:"), threads_before) << "waiting requests must not cost threads";
  const int listings_to_queue = scripted.hook->count(Operation::kGetChildren) - listings_before;
  m.unlock();
  ASSERT_TRUE(wait_until(
      [&] {
        std::lock_guard lock(order_mutex);
        return static_cast<int>(order.size()) + failures == kWaiters;
      },
      120s));
  EXPECT_EQ(failures, 0);
  std::vector<int> expected(kWaiters);
  for (int i = 0; i < kWaiters; ++i) expected[i] = i;
  EXPECT_EQ(order, expected) << "not served in the order they queued";
  // A listing each would be a thousand to queue and a thousand more to drain (N^2/2 names).
  EXPECT_LT(listings_to_queue, kWaiters / 10) << "the requests did not share their listings";
  const int listings_in_all = scripted.hook->count(Operation::kGetChildren) - listings_before;
  EXPECT_LT(listings_in_all - listings_to_queue, kWaiters / 10)
      << "the waiters listed the queue as it drained";
  EXPECT_EQ(suspended_or_lost.load(), 0) << "the session's heartbeats came late";
  expect_clean(s, server.port, path);
}

TEST(AsyncLockTest, DeadlineCompletesOnceWithTimedOutAndLeavesNothing) {
  HeldLock held("deadline");
  Session s(options_for(held.server.connect));
  Mutex m(s, held.path);
  Outcome timed, tried;
  const auto request = m.async_lock(timed.handler(), AsyncLockOptions::within(300ms));
  m.async_lock(tried.handler(), AsyncLockOptions::within(0ms));  // one attempt
  ASSERT_TRUE(timed.completed_with(Errc::timed_out));
  ASSERT_TRUE(tried.completed_with(Errc::timed_out));
  EXPECT_FALSE(request.pending());
  EXPECT_FALSE(timed.value.owns_lock());
  EXPECT_EQ(held.nodes().size(), 1U);
  request.cancel();  // too late: changes nothing
  held.holder.unlock();
  expect_clean(held.holder_session, held.server.port, held.path);
  EXPECT_EQ(timed.count(), 1);
  EXPECT_EQ(tried.count(), 1);
}

TEST(AsyncLockTest, CancelCompletesOnceWithCancelled) {
  HeldLock held("cancel");
  Session& s = held.holder_session;  // the waiting request's session too
  Mutex m(s, held.path);
  Outcome outcome;
  const auto request = m.async_lock(outcome.handler());
  ASSERT_TRUE(wait_until([&] { return lock_children(s, held.path).size() == 2; }, 10s));
  EXPECT_TRUE(request.pending());
  request.cancel();
  request.cancel();
  ASSERT_TRUE(outcome.completed_with(Errc::cancelled));
  EXPECT_EQ(lock_children(s, held.path).size(), 1U);  // gone before the handler ran
  held.holder.unlock();
  expect_clean(s, held.server.port, held.path);
  EXPECT_EQ(outcome.count(), 1);
}

// The holder's release and the waiter's cancel (or deadline) at the same moment: either the
// request acquired (and its Hold owns the lock) or it ended - never both, never neither.
TEST(AsyncLockTest, CancelOrDeadlineRacingTheAcquisitionCompletesExactlyOnce) {
  auto server = shared_server();
  const std::string path = unique_path("race");
  Session s(options_for(server.connect));
  Mutex holder(s, path), m(s, path), barrier_mutex(s, path + "-barrier");
  constexpr int kRounds = 60;
  int acquired = 0, ended = 0;
  for (int round = 0; round < kRounds; ++round) {
    holder.lock();
    Outcome outcome;
    const bool by_deadline = round % 2 == 1;
    AsyncLockOptions options;
    if (by_deadline) options = AsyncLockOptions::within(std::chrono::milliseconds(20 + round % 7));
    const auto request = m.async_lock(outcome.handler(), options);
    ASSERT_TRUE(
        wait_until([&] { return lock_children(s, path).size() == 2 || !request.pending(); }, 10s));
    std::thread releaser([&] { holder.unlock(); });
    if (!by_deadline) request.cancel();
    releaser.join();
    ASSERT_TRUE(wait_until([&] { return outcome.count() > 0; }, 10s));
    {
      std::lock_guard lock(outcome.mutex);
      if (!outcome.error) {
        ++acquired;
        EXPECT_TRUE(outcome.value.owns_lock());
        outcome.value.unlock();
      } else {
        ++ended;
        EXPECT_TRUE(outcome.error == make_error_code(Errc::cancelled) ||
                    outcome.error == make_error_code(Errc::timed_out))
            << outcome.error.message();
      }
    }
    ASSERT_TRUE(wait_until([&] { return lock_children(s, path).empty(); }, 10s)) << round;
    // A barrier on the event thread: a second completion posted so far has run by then.
    Outcome barrier;
    barrier_mutex.async_lock(barrier.handler());
    ASSERT_TRUE(barrier.acquired());
    EXPECT_EQ(outcome.count(), 1) << "round " << round;
  }
  EXPECT_EQ(acquired + ended, kRounds);
  expect_clean(s, server.port, path);
}

TEST(AsyncLockTest, HoldIsReleasedFromAnotherThreadAndReportsItsState) {
  auto server = shared_server();
  const std::string path = unique_path("hold");
  Session s(options_for(server.connect)), admin(options_for(server.connect));
  LostReports lost;
  Mutex m(s, path, lost.options());
  Hold hold = m.lock_future().get();
  EXPECT_TRUE(hold.owns_lock());
  EXPECT_EQ(hold.state(), LockState::kHeld);
  EXPECT_FALSE(m.owns_lock()) << "an asynchronous hold is not the object's blocking hold";
  const Acquisition taken = hold.acquisition();
  EXPECT_EQ(admin.get(taken.node_path)->stat.czxid, hold.fencing_token().value());
  // A second request queues behind it; the Hold moves to another thread and is released there.
  auto next = m.lock_future();
  ASSERT_TRUE(wait_until([&] { return lock_children(admin, path).size() == 2; }, 10s));
  std::thread([h = std::move(hold)]() mutable { h.unlock(); }).join();
  Hold second = next.get();
  EXPECT_TRUE(second.owns_lock());
  // Deleted under it by someone else: Lost, and said so.
  ASSERT_TRUE(admin.remove(second.acquisition().node_path));
  EXPECT_TRUE(second.wait_lost_for(5s));
  EXPECT_EQ(second.state(), LockState::kLost);
  EXPECT_TRUE(wait_until([&] { return lost.count() == 1; }, 5s));
  EXPECT_THROW(second.commit_fenced(FencedWrite().set(path, "x")), LockLostError);
  second.unlock();
  EXPECT_EQ(second.state(), LockState::kNotHeld);
  Hold empty;
  EXPECT_FALSE(empty.owns_lock());
  EXPECT_THROW((void)empty.acquisition(), Error);
  expect_clean(admin, server.port, path);
}

TEST(AsyncLockTest, TheHandlerRunsOnTheGivenExecutor) {
  auto server = shared_server();
  const std::string path = unique_path("executor");
  Session s(options_for(server.connect));
  Mutex m(s, path);
  // A minimal event loop: work posted to it runs on this test's thread.
  std::mutex queue_mutex;
  std::condition_variable queue_cv;
  std::deque<std::function<void()>> queue;
  AsyncLockOptions options;
  options.executor = [&](std::function<void()> work) {
    std::lock_guard lock(queue_mutex);
    queue.push_back(std::move(work));
    queue_cv.notify_one();
  };
  std::thread::id ran_on;
  Hold taken;
  m.async_lock(
      [&](std::error_code error, Hold hold) {
        EXPECT_FALSE(error);
        ran_on = std::this_thread::get_id();
        taken = std::move(hold);
      },
      options);
  std::function<void()> work;
  {
    std::unique_lock lock(queue_mutex);
    ASSERT_TRUE(queue_cv.wait_for(lock, 10s, [&] { return !queue.empty(); }));
    work = std::move(queue.front());
    queue.pop_front();
  }
  work();
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_TRUE(taken.owns_lock());
  // Work an executor drops (a loop that is shut down) releases the lock it carried.
  Mutex other(s, path);
  other.async_lock([](std::error_code, Hold) {}, options);
  taken.unlock();
  {
    std::unique_lock lock(queue_mutex);
    ASSERT_TRUE(queue_cv.wait_for(lock, 10s, [&] { return !queue.empty(); }));
    queue.clear();  // dropped, never run
  }
  expect_clean(s, server.port, path);
}

// An executor that drops the work it is given at once (a loop already shut down) may do so while
// the thread that settled the request is still finishing: the lock the work carried must be
// released by the drop, on whichever thread, and never by the settling thread under the Mutex's own
// lock (that deadlocked it: CI saw it under ThreadSanitizer). The race is narrow, so it is run
// many times; a hang fails the test instead of timing out the binary.
TEST(AsyncLockTest, AnExecutorDroppingTheWorkAtOnceReleasesTheLockWithoutDeadlock) {
  auto server = shared_server();
  const std::string path = unique_path("dropping-executor");
  Session s(options_for(server.connect));
  std::atomic<int> dropped{0};
  std::atomic<int> ran{0};
  AsyncLockOptions options;
  options.executor = [&](std::function<void()> work) {
    work = nullptr;  // dropped here, on the events thread, at once
    ++dropped;
  };
  constexpr int kRounds = 300;
  int rounds = 0;
  run_with_deadline(
      [&] {
        Mutex m(s, path);
        for (; rounds < kRounds; ++rounds) {
          m.async_lock([&](std::error_code, Hold) { ++ran; }, options);
          if (!wait_until([&] { return dropped.load() == rounds + 1; }, 10s)) break;
          // The dropped work released its lock: the next round acquires it at once.
          if (!wait_until([&] { return lock_children(s, path).empty(); }, 10s)) break;
        }
        return true;
      },
      120s, "acquisitions whose work an executor drops, then ~Mutex");
  EXPECT_EQ(rounds, kRounds);
  EXPECT_EQ(dropped.load(), kRounds);
  EXPECT_EQ(ran.load(), 0);
  expect_clean(s, server.port, path);
}

TEST(AsyncLockTest, TheFutureFormThrowsWhatLockWouldThrow) {
  HeldLock held("future");
  Mutex m(held.holder_session, held.path);
  auto timed = m.lock_future(AsyncLockOptions::within(100ms));
  try {
    (void)timed.get();
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.errc(), Errc::timed_out) << e.what();
  }
  EXPECT_THROW(m.async_lock(LockHandler()), InvalidArgumentError);
  held.holder.unlock();
}

TEST(AsyncLockTest, SessionCloseAndMutexDestructionCompleteWaitingRequests) {
  HeldLock held("close");
  Outcome by_destruction, held_when_destroyed, by_close, after_close;
  {
    Session s(options_for(held.server.connect));
    {
      Mutex m(s, held.path);
      Mutex free_path(s, held.path + "-free");
      free_path.async_lock(held_when_destroyed.handler());
      ASSERT_TRUE(held_when_destroyed.acquired());
      m.async_lock(by_destruction.handler());
      ASSERT_TRUE(wait_until([&] { return lock_children(s, held.path).size() == 2; }, 10s));
    }  // ~Mutex: the waiting request is cancelled, the Hold's lock released
    ASSERT_TRUE(by_destruction.completed_with(Errc::cancelled));
    {
      std::lock_guard lock(held_when_destroyed.mutex);
      EXPECT_EQ(held_when_destroyed.value.state(), LockState::kNotHeld);
    }
    Mutex m(s, held.path);
    m.async_lock(by_close.handler());
    ASSERT_TRUE(wait_until([&] { return lock_children(s, held.path).size() == 2; }, 10s));
    expect_close_ends_requests(s, by_close, after_close,
                               [&] { m.async_lock(after_close.handler()); });
  }
  EXPECT_EQ(by_destruction.count(), 1);
  held.holder.unlock();
  expect_clean(held.holder_session, held.server.port, held.path);
  expect_clean(held.holder_session, held.server.port, held.path + "-free");
}

TEST(AsyncLockTest, SessionLostWhileWaitingCompletesWithSessionLost_FaultHook) {
  HeldLock held("lost-hook");
  // While `silent`, every request of the session fails: no answer, so the session is Lost on its
  // own clock, as if the network were cut.
  std::atomic<bool> silent{false};
  auto scripted = silenceable_session(options_for(held.server.connect, 2000ms), silent);
  Mutex m(*scripted.session, held.path);
  Outcome outcome;
  m.async_lock(outcome.handler());
  ASSERT_TRUE(wait_until([&] { return held.nodes().size() == 2; }, 10s));
  silent = true;
  ASSERT_TRUE(outcome.completed_with(Errc::session_lost, 20s));
  silent = false;
  held.holder.unlock();
  // The waiter's node goes with its old session (expired by the server).
  expect_clean(held.holder_session, held.server.port, held.path);
  EXPECT_EQ(outcome.count(), 1);
}

TEST(AsyncLockTest, SessionLostWhileWaitingCompletesWithSessionLost_FrozenServer) {
  if (using_external_server()) GTEST_SKIP() << "needs a server of its own to freeze";
  auto server = start_fast_expiry_server();
  const std::string path = unique_path("lost-frozen");
  Session holder_session(options_for(server->connect_string(), 3000ms));
  Session s(options_for(server->connect_string(), 3000ms));
  Mutex holder(holder_session, path), m(s, path);
  holder.lock();
  Outcome waiting, held;
  m.async_lock(waiting.handler());
  ASSERT_TRUE(wait_until([&] { return lock_children(s, path).size() == 2; }, 10s));
  Mutex other(s, path + "-other");
  other.async_lock(held.handler());
  ASSERT_TRUE(held.acquired());
  server->freeze();
  ASSERT_TRUE(waiting.completed_with(Errc::session_lost, 20s));
  {
    std::lock_guard lock(held.mutex);
    EXPECT_TRUE(held.value.wait_lost_for(10s));
    EXPECT_EQ(held.value.state(), LockState::kLost);
  }
  server->thaw();
  EXPECT_EQ(waiting.count(), 1);
  ASSERT_TRUE(wait_until([&] { return s.state() == SessionState::kConnected; }, 20s));
  holder.unlock();
  expect_clean(s, server->port(), path);
}

TEST(AsyncLockTest, SharedMutexRequestsShareAndExclude) {
  auto server = shared_server();
  const std::string path = unique_path("shared");
  Session s(options_for(server.connect));
  SharedMutex a(s, path), b(s, path), w(s, path);
  Hold first = a.lock_shared_future().get();
  Hold second = b.lock_shared_future().get();  // readers share
  EXPECT_TRUE(first.acquisition().shared);
  EXPECT_TRUE(second.owns_lock());
  auto writer = w.lock_future();
  ASSERT_TRUE(wait_until([&] { return lock_children(s, path).size() == 3; }, 10s));
  EXPECT_EQ(writer.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  first.unlock();
  second.unlock();
  Hold exclusive = writer.get();
  EXPECT_FALSE(exclusive.acquisition().shared);
  exclusive.unlock();
  expect_clean(s, server.port, path);
}

}  // namespace
}  // namespace zklock::testing
