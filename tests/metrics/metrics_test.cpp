// The figures (zklock/metrics.h) and the event hook (zklock/event_hook.h) against a real server:
// each count equals what the test did - acquisitions by recipe and outcome, waits, holds and how
// they ended, a Lost with its cause, the gauges - and a hook that blocks costs the recipe nothing.
#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "test_env.h"
#include "zklock/event_hook.h"
#include "zklock/prometheus.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

std::uint64_t count(const MetricsSnapshot& m, Recipe recipe, const std::string& path,
                    AcquireOutcome outcome) {
  const auto it = m.locks.find({recipe, path});
  return it == m.locks.end() ? 0 : it->second.acquisitions[static_cast<std::size_t>(outcome)];
}

const LockFigures& figures(const MetricsSnapshot& m, Recipe recipe, const std::string& path) {
  static const LockFigures none;
  const auto it = m.locks.find({recipe, path});
  return it == m.locks.end() ? none : it->second;
}

std::uint64_t ended(const LockFigures& f, HoldEnd end) {
  return f.hold_ends[static_cast<std::size_t>(end)];
}

SessionOptions naming(const std::string& connect, std::vector<std::string> paths) {
  SessionOptions o = options_for(connect);
  o.metrics_paths = std::move(paths);
  return o;
}

// A lock path whose figures the session `s` keeps apart (a named path), and a second session
// (`other`: a rival holder, an operator) on the same server.
struct NamedPath {
  explicit NamedPath(const std::string& name)
      : server(shared_server()),
        path(unique_path(name)),
        s(naming(server.connect, {path})),
        other(options_for(server.connect)) {}
  ServerRef server;
  std::string path;
  Session s;
  Session other;
};

TEST(MetricsTest, MutexAcquisitionsTimeoutsAndHoldsAreCountedPerNamedPath) {
  auto server = shared_server();
  const std::string named = unique_path("named");
  const std::string other = unique_path("other");
  Session s(naming(server.connect, {named}));
  Session rival(options_for(server.connect));
  Mutex m(s, named);
  Mutex unnamed(s, other);
  for (int i = 0; i < 3; ++i) {
    m.lock();
    // Ours, and for a moment the last cycle's, whose delete may still be on its way.
    EXPECT_TRUE(wait_until([&] { return s.metrics().nodes == 1; }, 10s)) << s.metrics().nodes;
    m.unlock();
  }
  unnamed.lock();
  unnamed.unlock();
  {
    Mutex held(rival, named);
    held.lock();
    EXPECT_FALSE(m.try_lock_for(300ms));  // queues behind it, then times out
    EXPECT_FALSE(m.try_lock());           // finds it taken at once
  }
  const MetricsSnapshot after = s.metrics();
  EXPECT_EQ(count(after, Recipe::kMutex, named, AcquireOutcome::kAcquired), 3u);
  EXPECT_EQ(count(after, Recipe::kMutex, named, AcquireOutcome::kTimedOut), 2u);
  // The unnamed path counts under "" (all others), never under a label of its own.
  EXPECT_EQ(count(after, Recipe::kMutex, "", AcquireOutcome::kAcquired), 1u);
  EXPECT_EQ(after.locks.count({Recipe::kMutex, other}), 0u);
  const LockFigures& f = figures(after, Recipe::kMutex, named);
  EXPECT_EQ(f.wait.count, 5u);  // every outcome's wait
  EXPECT_EQ(f.contended, 1u);   // only the one that queued behind the rival
  EXPECT_GE(f.wait.sum, 0.3);   // the timed-out wait alone lasted 300 ms
  EXPECT_EQ(f.hold.count, 3u);
  EXPECT_EQ(ended(f, HoldEnd::kReleased), 3u);
  EXPECT_EQ(f.queue_length.count, 5u);
  EXPECT_EQ(f.queue_length.counts.front(), 3u);  // first in line three times (bucket le=1)
  EXPECT_TRUE(wait_until([&] { return s.metrics().nodes == 0; }, 10s)) << s.metrics().nodes;
  // Each acquisition sends at least its create and its listing.
  EXPECT_GE(after.requests.at("create"), 6u);
  EXPECT_GE(after.requests.at("get_children"), 6u);
  EXPECT_GE(after.requests.at("delete"), 4u);
  EXPECT_EQ(after.generations, 1u);
  EXPECT_EQ(after.sessions, 1u);

  const std::string text = to_prometheus(after);
  EXPECT_NE(text.find("zklock_lock_acquisitions_total{recipe=\"mutex\",path=\"" + named +
                      "\",outcome=\"acquired\"} 3\n"),
            std::string::npos)
      << text.substr(0, 2000);
  EXPECT_NE(
      text.find("zklock_lock_wait_seconds_count{recipe=\"mutex\",path=\"" + named + "\"} 5\n"),
      std::string::npos);
}

TEST(MetricsTest, EveryRecipeCountsUnderItsOwnName) {
  auto server = shared_server();
  const std::string root = unique_path("recipes");
  Session s(naming(server.connect, {root + "/rw", root + "/sem", root + "/a"}));
  SharedMutex rw(s, root + "/rw");
  rw.lock_shared();
  rw.unlock_shared();
  rw.lock();
  rw.unlock();
  Semaphore sem(s, root + "/sem", 2);
  {
    Lease lease = sem.acquire();
    // The lease; the internal lock's node goes at once.
    EXPECT_TRUE(wait_until([&] { return s.metrics().nodes == 1; }, 10s)) << s.metrics().nodes;
  }
  Mutex a(s, root + "/a");
  Mutex b(s, root + "/b");
  LockSet set;
  set.add(a).add(b);
  set.lock();
  set.unlock();
  std::promise<std::error_code> done;
  Mutex async_mutex(s, root + "/a");
  auto request = async_mutex.async_lock([&done](std::error_code error, Hold hold) {
    hold.unlock();
    done.set_value(error);
  });
  ASSERT_FALSE(done.get_future().get());

  const MetricsSnapshot m = s.metrics();
  EXPECT_EQ(count(m, Recipe::kSharedRead, root + "/rw", AcquireOutcome::kAcquired), 1u);
  EXPECT_EQ(count(m, Recipe::kSharedWrite, root + "/rw", AcquireOutcome::kAcquired), 1u);
  EXPECT_EQ(count(m, Recipe::kSemaphore, root + "/sem", AcquireOutcome::kAcquired), 1u);
  EXPECT_EQ(ended(figures(m, Recipe::kSemaphore, root + "/sem"), HoldEnd::kReleased), 1u);
  // The semaphore's internal lock is not a Mutex of the application's.
  EXPECT_EQ(m.acquisitions(Recipe::kMutex, AcquireOutcome::kAcquired), 3u);  // a, b, async
  EXPECT_EQ(count(m, Recipe::kLockSet, root + "/a", AcquireOutcome::kAcquired), 1u);
  EXPECT_EQ(ended(figures(m, Recipe::kLockSet, root + "/a"), HoldEnd::kReleased), 1u);
  EXPECT_EQ(count(m, Recipe::kMutex, root + "/a", AcquireOutcome::kAcquired), 2u);
  EXPECT_EQ(ended(figures(m, Recipe::kMutex, root + "/a"), HoldEnd::kReleased), 2u);
}

TEST(MetricsTest, CancelledAndAsynchronousTimeoutsAreCounted) {
  NamedPath named("cancel");
  const std::string& path = named.path;
  Session& s = named.s;
  Mutex held(named.other, path);
  held.lock();
  Mutex m(s, path);
  std::promise<std::error_code> timed_out;
  m.async_lock([&timed_out](std::error_code error, Hold) { timed_out.set_value(error); },
               AsyncLockOptions::within(200ms));
  EXPECT_EQ(timed_out.get_future().get(), make_error_code(Errc::timed_out));
  auto waiting = std::async(std::launch::async, [&] { return m.try_lock_for(60s); });
  ASSERT_TRUE(wait_until(
      [&] { return figures(s.metrics(), Recipe::kMutex, path).queue_length.count == 2; }, 10s))
      << "the waiter never queued";
  m.cancel();
  EXPECT_FALSE(waiting.get());
  const MetricsSnapshot after = s.metrics();
  EXPECT_EQ(count(after, Recipe::kMutex, path, AcquireOutcome::kTimedOut), 1u);
  EXPECT_EQ(count(after, Recipe::kMutex, path, AcquireOutcome::kCancelled), 1u);
  EXPECT_EQ(figures(after, Recipe::kMutex, path).contended, 2u);
}

TEST(MetricsTest, AHolderLostToAFrozenServerIsCountedWithItsCause) {
  if (using_external_server()) GTEST_SKIP() << "freezes its own server";
  auto server = ZkServer::start();
  const std::string path = unique_path("lost");
  auto o = naming(server->connect_string(), {path});
  o.session_timeout = 4000ms;
  Session s(o);
  Mutex m(s, path);
  m.lock();
  server->freeze();
  const bool lost = m.wait_lost_for(30s);
  server->thaw();
  ASSERT_TRUE(lost);
  ASSERT_TRUE(wait_until([&] { return s.metrics().generations == 2; }, 30s));
  const MetricsSnapshot after = s.metrics();
  EXPECT_EQ(ended(figures(after, Recipe::kMutex, path), HoldEnd::kSessionSilent), 1u);
  EXPECT_EQ(after.sessions_lost[static_cast<std::size_t>(LostCause::kSilent)], 1u);
  EXPECT_EQ(after.sessions_lost[static_cast<std::size_t>(LostCause::kExpired)], 0u);
  EXPECT_GE(after.suspensions, 1u);
  EXPECT_GE(after.suspended.count, 1u);  // the episode ended (in Lost)
  m.unlock();                            // already ended: counted once
  EXPECT_EQ(figures(s.metrics(), Recipe::kMutex, path).hold.count, 1u);
}

TEST(MetricsTest, ANodeDeletedUnderTheHolderIsCountedAsSuch) {
  NamedPath named("deleted");
  const std::string& path = named.path;
  Session& s = named.s;
  Mutex m(s, path);
  m.lock();
  named.other.remove(m.acquisition()->node_path);  // an operator deletes it
  ASSERT_TRUE(m.wait_lost_for(30s));
  EXPECT_EQ(ended(figures(s.metrics(), Recipe::kMutex, path), HoldEnd::kNodeDeleted), 1u);
  m.unlock();
  EXPECT_EQ(figures(s.metrics(), Recipe::kMutex, path).hold.count, 1u);
}

TEST(MetricsTest, WithMetricsOffNoLockOrRequestIsCounted) {
  auto server = shared_server();
  auto o = options_for(server.connect);
  o.metrics = false;
  Session s(o);
  Mutex m(s, unique_path("off"));
  m.lock();
  m.unlock();
  const MetricsSnapshot after = s.metrics();
  EXPECT_EQ(after.acquisitions(Recipe::kMutex, AcquireOutcome::kAcquired), 0u);
  EXPECT_TRUE(after.requests.empty());
  EXPECT_EQ(after.generations, 1u);  // the session's own figures stay
}

TEST(MetricsTest, ProcessFiguresKeepClosedSessions) {
  auto server = shared_server();
  const std::uint64_t before =
      process_metrics().acquisitions(Recipe::kMutex, AcquireOutcome::kAcquired);
  {
    Session s(options_for(server.connect));
    Mutex m(s, unique_path("process"));
    m.lock();
    m.unlock();
  }
  const MetricsSnapshot after = process_metrics();
  EXPECT_GE(after.acquisitions(Recipe::kMutex, AcquireOutcome::kAcquired), before + 1);
  EXPECT_GE(after.sessions, 1u);
}

// A hook that blocks until released, recording what it was given.
class BlockingHook final : public EventHook {
 public:
  void on_acquire(const AcquireEvent& e) override {
    take("acquire " + std::string(to_string(e.outcome)));
  }
  void on_release(const ReleaseEvent& e) override {
    take("release " + std::string(to_string(e.end)));
  }
  void on_session_state(const SessionStateEvent& e) override {
    take("state " + std::string(to_string(e.event.state)));
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  std::vector<std::string> seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  void take(std::string event) {
    std::unique_lock lock(mutex_);
    seen_.push_back(std::move(event));
    cv_.wait(lock, [&] { return open_; });
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
  std::vector<std::string> seen_;
};

// A session whose EventHook blocks until opened (queue of `queue` events), and a Mutex on it.
struct HookedSession {
  HookedSession(const std::string& stem, std::size_t queue)
      : hook(std::make_shared<BlockingHook>()),
        session(options(hook, queue)),
        mutex(session, unique_path(stem)) {}
  static SessionOptions options(std::shared_ptr<EventHook> hook, std::size_t queue) {
    SessionOptions o = options_for(shared_server().connect);
    o.event_hook = std::move(hook);
    o.event_hook_queue = queue;
    return o;
  }
  // `n` lock/unlock cycles, each given 10 s. Returns: how many completed.
  int lock_cycles(int n) {
    for (int i = 0; i < n; ++i) {
      if (!mutex.try_lock_for(10s)) return i;
      mutex.unlock();
    }
    return n;
  }
  std::shared_ptr<BlockingHook> hook;
  Session session;
  Mutex mutex;
};

TEST(MetricsTest, ABlockedHookCostsOnlyItsOwnThreadAndGetsEveryEventInOrder) {
  HookedSession h("hook", 100);
  // The hook is stuck in its first event (Connected) the whole time: were it called on a recipe's
  // path, the first lock() would never return.
  ASSERT_EQ(h.lock_cycles(10), 10);
  EXPECT_LE(h.hook->seen().size(), 1u);
  h.hook->open();
  const auto lock_events = [&] {
    std::vector<std::string> out;
    for (auto& e : h.hook->seen()) {
      if (e.rfind("state ", 0) != 0) out.push_back(e);  // a loaded machine may add Suspended
    }
    return out;
  };
  ASSERT_TRUE(wait_until([&] { return lock_events().size() == 20; }, 10s))
      << lock_events().size() << " lock events";
  EXPECT_EQ(h.hook->seen().front(), "state Connected");
  const auto seen = lock_events();
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(seen[2 * i], "acquire acquired") << i;
    EXPECT_EQ(seen[2 * i + 1], "release released") << i;
  }
  EXPECT_EQ(h.session.metrics().hook_events_dropped, 0u);
}

TEST(MetricsTest, CloseDeliversTheHooksLastEventsThenStopsItsThread) {
  HookedSession h("hook-close", 10'000);
  h.hook->open();
  h.mutex.lock();
  h.session.close();  // returns once the hook has had everything up to the close
  const auto seen = h.hook->seen();
  ASSERT_GE(seen.size(), 4u);
  EXPECT_EQ(seen[seen.size() - 2], "state Closed");
  EXPECT_EQ(seen.back(), "release closed");  // the held lock went with the session
  h.mutex.unlock();                          // after the close: its end was counted already
  EXPECT_EQ(h.hook->seen().size(), seen.size());
}

TEST(MetricsTest, AFullHookQueueDropsAndCountsInsteadOfWaiting) {
  HookedSession h("hook-full", 4);
  ASSERT_EQ(h.lock_cycles(10), 10);
  // One event in the hook, four queued, the other 16 (or more) of 21 (or more) dropped.
  EXPECT_GE(h.session.metrics().hook_events_dropped, 16u);
  h.hook->open();
  ASSERT_TRUE(wait_until([&] { return h.hook->seen().size() == 5; }, 10s));
}

}  // namespace
}  // namespace zklock::testing
