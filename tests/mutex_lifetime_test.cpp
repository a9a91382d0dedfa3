// zklock::Mutex and Guard at the edges of their lives and of their ownership: destroyed while a
// thread waits, callbacks after the destructor, guards that do not own the lock, deadlines at the
// end of the clock, and acquisitions that must never be handed out already lost.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "held_lock.h"
#include "support/fault_proxy.h"
#include "test_env.h"
#include "waiter.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

// A gate a callback can be held at until the test opens it.
class Gate {
 public:
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  void pass() {
    std::unique_lock lock(mutex_);
    arrived_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  bool wait_arrived(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return arrived_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
  bool arrived_ = false;
};

// Issue 12, item 7: ~Mutex cancels a lock() waiting on another thread; that thread must leave
// without touching the destroyed object (AddressSanitizer reports the old use after free).
TEST(MutexLifetimeTest, DestroyingAMutexCancelsAWaitingLockOnAnotherThread) {
  HeldLock held("destroyed-while-waiting");
  Session s(options_for(held.server.connect));
  auto waiting = std::make_unique<Mutex>(s, held.path);
  Waiter w(*waiting);
  ASSERT_TRUE(wait_until([&] { return lock_children(s, held.path).size() == 2; }, 5s));
  waiting.reset();  // returns once the waiting call has left the Mutex (AddressSanitizer checks
                    // that nothing of it is touched afterwards)
  w.join();
  EXPECT_TRUE(w.cancelled()) << w.error();
  EXPECT_FALSE(w.acquired());
  // Its node went with the cancelled attempt.
  EXPECT_TRUE(wait_until([&] { return lock_children(s, held.path).size() == 1; }, 5s));
  held.holder.unlock();
}

// Issue 12, item 14: no on_state_change (or on_release_error) call starts after ~Mutex returned.
// The event thread is held inside another lock's callback while this lock's Lost callback is
// queued behind it; the Mutex is destroyed; then the event thread is let go.
TEST(MutexLifetimeTest, NoCallbackRunsAfterTheDestructorReturned) {
  auto server = shared_server();
  const std::string base = unique_path("callbacks-after-destruction");
  Session s(options_for(server.connect, 2000ms)), admin(options_for(server.connect));

  Gate gate;
  MutexOptions blocking;
  blocking.on_state_change = [&](LockState st, const Acquisition&) {
    if (st == LockState::kLost) gate.pass();
  };
  Mutex first(s, base + "/first", blocking);
  first.lock();

  std::atomic<bool> destroyed{false}, called_after_destruction{false};
  MutexOptions counting;
  counting.on_state_change = [&](LockState, const Acquisition&) {
    if (destroyed) called_after_destruction = true;
  };
  auto second = std::make_unique<Mutex>(s, base + "/second", counting);
  second->lock();

  std::atomic<bool> third_lost{false};
  MutexOptions marker;
  marker.on_state_change = [&](LockState st, const Acquisition&) {
    if (st == LockState::kLost) third_lost = true;
  };
  Mutex third(s, base + "/third", marker);
  third.lock();

  ASSERT_TRUE(admin.remove(first.acquisition()->node_path));
  ASSERT_TRUE(gate.wait_arrived(10s)) << "the first lock's Lost callback never ran";
  ASSERT_TRUE(admin.remove(second->acquisition()->node_path));
  ASSERT_TRUE(wait_until([&] { return second->state() == LockState::kLost; }, 10s));
  second.reset();
  destroyed = true;
  ASSERT_TRUE(admin.remove(third.acquisition()->node_path));
  ASSERT_TRUE(wait_until([&] { return third.state() == LockState::kLost; }, 10s));
  gate.open();
  // Callbacks run in order: once the third lock's has run, the second's would have too.
  ASSERT_TRUE(wait_until([&] { return third_lost.load(); }, 10s));
  EXPECT_FALSE(called_after_destruction.load());
  first.unlock();
  third.unlock();
}

// Issue 12, item 5: a Guard that did not get the lock has no token and no acquisition, even when
// another thread of this process holds the same Mutex. The Mutex's own accessors describe the
// object's current acquisition, whichever thread asks (documented in mutex.h).
TEST(MutexLifetimeTest, AGuardThatDoesNotOwnTheLockRefusesTokenAndAcquisition) {
  HeldLock held("guard-owner");
  Mutex& m = held.holder;
  const FencingToken holders_token = m.fencing_token();
  std::thread other([&] {
    Guard tried(m, std::try_to_lock);
    EXPECT_FALSE(tried.owns_lock());
    EXPECT_THROW((void)tried.fencing_token(), Error);
    EXPECT_THROW((void)tried.acquisition(), Error);
    EXPECT_EQ(tried.state(), LockState::kNotHeld);
    EXPECT_FALSE(tried.valid());
    Guard timed(m, 50ms);
    EXPECT_FALSE(timed.owns_lock());
    EXPECT_THROW((void)timed.fencing_token(), Error);
    // The object's acquisition, seen from another thread of the holding process.
    EXPECT_EQ(m.fencing_token(), holders_token);
    EXPECT_TRUE(m.owns_lock());
  });
  other.join();
  m.unlock();
}

// Issue 12, item 13: a deadline at the end of the clock means "wait as long as it takes", not
// "give up at once" (the sum used to overflow into the past).
TEST(MutexLifetimeTest, DeadlinesAtTheEndOfTheClockWaitForTheLock) {
  auto server = shared_server();
  const std::string path = unique_path("max-deadline");
  Session holder_session(options_for(server.connect)), s(options_for(server.connect));
  Mutex holder(holder_session, path);
  Mutex m(s, path);
  using TryLock = std::function<bool()>;
  const std::vector<std::pair<const char*, TryLock>> calls = {
      {"try_lock_for(milliseconds::max())",
       [&] { return m.try_lock_for(std::chrono::milliseconds::max()); }},
      {"try_lock_for(hours::max())", [&] { return m.try_lock_for(std::chrono::hours::max()); }},
      {"try_lock_until(steady_clock::time_point::max())",
       [&] { return m.try_lock_until(Clock::time_point::max()); }},
      {"try_lock_until(system_clock::time_point::max())",
       [&] { return m.try_lock_until(std::chrono::system_clock::time_point::max()); }},
  };
  for (const auto& [name, call] : calls) {
    holder.lock();
    std::atomic<int> result{-1};
    std::thread t([&, call = call] { result = call() ? 1 : 0; });
    EXPECT_TRUE(wait_until([&] { return lock_children(s, path).size() == 2 || result != -1; }, 5s));
    EXPECT_EQ(result.load(), -1) << name << " returned at once";
    holder.unlock();
    t.join();
    EXPECT_EQ(result.load(), 1) << name;
    if (result == 1) m.unlock();
  }
  // wait_lost_for(max) waits until the lock is released (or lost).
  m.lock();
  std::atomic<int> lost{-1};
  std::thread t([&] { lost = m.wait_lost_for(std::chrono::milliseconds::max()) ? 1 : 0; });
  EXPECT_FALSE(wait_until([&] { return lost != -1; }, 300ms))
      << "wait_lost_for(max) returned at once";
  m.unlock();
  t.join();
  EXPECT_EQ(lost.load(), 1);
}

// Issue 12, item 3: a holder whose watch on its own node was used up by a data change (anyone may
// set data on it) must still learn when the node is deleted.
TEST(MutexLifetimeTest, AHolderStillSeesItsNodeDeletedAfterADataChangeUsedUpItsWatch) {
  auto server = shared_server();
  const std::string path = unique_path("self-watch-rearm");
  Session a(options_for(server.connect, 2000ms)), b(options_for(server.connect, 2000ms));
  Session admin(options_for(server.connect));
  Mutex first(a, path), second(b, path);
  first.lock();
  Waiter w(second);  // second in line behind a first-in-line holder: it watches its own node too
  ASSERT_TRUE(wait_until([&] { return lock_children(admin, path).size() == 2; }, 5s));
  first.unlock();
  ASSERT_TRUE(wait_until([&] { return w.acquired(); }, 5s));
  const std::string node = second.acquisition()->node_path;
  admin.set(node, "someone else's data");
  // One round trip on the holder's session: the data-change notification (sent before this reply
  // on the same connection) has been processed by the holder when it returns.
  ASSERT_TRUE(b.get(node).has_value());
  ASSERT_TRUE(admin.remove(node));
  EXPECT_TRUE(second.wait_lost_for(10s)) << second.state();
  second.unlock();
}

// Issue 12, item 2: lock() never returns an acquisition that is already lost. A waiter second in
// line is cut off; meanwhile its own node is deleted and the holder releases; when the connection
// comes back the server replays both deletions (SetWatches), in an order that depends on the
// names. Whatever the order, lock() must return only with a node of ours that exists, first in
// line. Several rounds: on the old code about half of them returned a node that was gone.
TEST(MutexLifetimeTest, LockNeverReturnsAnAcquisitionThatIsAlreadyLost) {
  auto server = shared_server();
  Session admin(options_for(server.connect));
  constexpr int kRounds = 6;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string path = unique_path("replayed-deletions");
    auto proxy = FaultProxy::start("127.0.0.1", server.port);
    Session holder_session(options_for(server.connect));
    Session s(options_for(proxy->connect_string(), 6000ms));
    Mutex holder(holder_session, path), m(s, path);
    holder.lock();
    Waiter w(m);
    ASSERT_TRUE(wait_until([&] { return lock_children(admin, path).size() == 2; }, 5s));
    std::string ours;
    for (const auto& child : lock_children(admin, path)) {
      if (path + "/" + child != holder.acquisition()->node_path) ours = path + "/" + child;
    }
    ASSERT_FALSE(ours.empty());
    // Both watches are on the server before the cut.
    ASSERT_TRUE(wait_until([&] { return watches_under(server.port, path).size() == 2; }, 5s));
    proxy->blackhole();
    ASSERT_TRUE(admin.remove(ours));
    holder.unlock();
    proxy->heal(Heal::kResetDamaged);
    proxy->reset_all();
    ASSERT_TRUE(wait_until([&] { return w.done(); }, 15s));
    ASSERT_TRUE(w.acquired()) << w.error();
    const auto acquisition = m.acquisition();
    ASSERT_TRUE(acquisition);
    EXPECT_NE(acquisition->node_path, ours) << "handed out the node that had been deleted";
    EXPECT_TRUE(admin.get(acquisition->node_path).has_value()) << acquisition->node_path;
    EXPECT_EQ(acquisition->session_id, s.session_id());
    m.unlock();
  }
}

}  // namespace
}  // namespace zklock::testing

namespace zklock::testing {
namespace {

// Review 3, item 5: Session::close() called on the events thread (here from a LockHandler, which
// the library supports) detaches that thread. The application then destroys the Mutex and the
// Session while the handler still runs; when the handler returns, the Hold it was given lets go
// of the last reference to the session's core, so the core is destroyed on the detached thread
// itself, which then goes on in the dispatcher it was running (AddressSanitizer:
// heap-use-after-free in EventDispatcher::loop). Repeated: the last steps are a small window.
TEST(MutexLifetimeTest, ClosingTheSessionFromAHandlerThenDestroyingItIsSafe) {
  auto server = shared_server();
  for (int i = 0; i < 100; ++i) {
    auto session = std::make_unique<Session>(options_for(server.connect));
    auto mutex = std::make_unique<Mutex>(*session, unique_path("close-from-handler"));
    // Shared with the handler, which outlives this iteration.
    auto closed = std::make_shared<std::atomic<bool>>(false);
    auto released = std::make_shared<std::atomic<bool>>(false);
    Session* raw = session.get();
    mutex->async_lock([closed, released, raw](std::error_code, Hold hold) {
      hold.unlock();
      raw->close();  // on the events thread
      *closed = true;
      // The application lets go of everything meanwhile; `hold` goes last, with the handler.
      wait_until([&] { return released->load(); }, 5s, 1ms);
    });
    ASSERT_TRUE(wait_until([&] { return closed->load(); }, 10s)) << "iteration " << i;
    mutex.reset();
    session.reset();
    *released = true;
  }
}

}  // namespace
}  // namespace zklock::testing
