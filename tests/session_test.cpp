// zklock::Session against real servers: connect, close, bad input, and the monitor's decisions
// (Suspended, Lost, a new generation) when the server freezes, restarts, expires the session, or an
// ensemble loses its leader.
#include <zookeeper/zookeeper.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "expire_session.h"
#include "session/session_core.h"
#include "support/proc_status.h"
#include "support/zk_ensemble.h"
#include "test_env.h"
#include "zklock/errors.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Records every event a listener sees, with the time it arrived.
class EventLog {
 public:
  explicit EventLog(Session& s) : session_(s) {
    id_ = s.add_listener([this](const SessionEvent& e) {
      std::lock_guard lock(mutex_);
      events_.push_back({e, Clock::now()});
    });
  }
  ~EventLog() { session_.remove_listener(id_); }
  struct Entry {
    SessionEvent event;
    Clock::time_point at;
  };
  std::vector<Entry> entries() const {
    std::lock_guard lock(mutex_);
    return events_;
  }
  std::vector<SessionState> states() const {
    std::vector<SessionState> out;
    for (const auto& e : entries()) out.push_back(e.event.state);
    return out;
  }
  bool wait_for(SessionState s, std::chrono::milliseconds timeout) const {
    return wait_until(
        [&] {
          for (const auto& e : entries()) {
            if (e.event.state == s) return true;
          }
          return false;
        },
        timeout);
  }
  /// Listeners run on the events thread, after state() has already changed: wait for the event
  /// itself before reading states().
  bool wait_last(SessionState s, std::chrono::milliseconds timeout) const {
    return wait_until(
        [&] {
          const auto all = states();
          return !all.empty() && all.back() == s;
        },
        timeout);
  }
  std::optional<Clock::time_point> first(SessionState s) const {
    for (const auto& e : entries()) {
      if (e.event.state == s) return e.at;
    }
    return std::nullopt;
  }

 private:
  Session& session_;
  Session::ListenerId id_;
  mutable std::mutex mutex_;
  std::vector<Entry> events_;
};

TEST(SessionTest, ConnectsReportsNegotiatedTimeoutAndCloses) {
  auto server = shared_server();
  Session s(options_for(server.connect, 4000ms));
  EXPECT_EQ(s.state(), SessionState::kConnected);
  EXPECT_NE(s.session_id(), 0);
  EXPECT_EQ(s.generation(), 1u);
  EXPECT_EQ(s.negotiated_timeout(), 4000ms);
  EXPECT_GT(s.lost_deadline(), Clock::now());
  EXPECT_TRUE(s.wait_connected(1s));
  s.close();
  EXPECT_EQ(s.state(), SessionState::kClosed);
  EXPECT_THROW(s.wait_connected(10ms), ClosedError);
  s.close();  // idempotent
}

// A Session runs six threads (docs/architecture.md): the C client's I/O and completion threads,
// the monitor, the reconnector, the events thread and the reaper. The probe that bounds tickTime
// has a session and threads of its own, which are gone by the time the constructor returns -
// always, not only when the machine is quiet (CI counted one thread too many right after a
// constructor, under load).
TEST(SessionTest, AConstructedSessionRunsItsSixThreadsAndNoOther) {
  auto server = shared_server();
  for (int round = 0; round < 5; ++round) {
    const std::int64_t before = proc_status("Threads:");
    Session s(options_for(server.connect, 4000ms));
    EXPECT_EQ(proc_status("Threads:"), before + 6) << "round " << round;
    s.close();
    EXPECT_EQ(proc_status("Threads:"), before) << "round " << round << ", after close()";
  }
}

TEST(SessionTest, ServerClampsTheRequestedTimeout) {
  auto server = shared_server();
  if (using_external_server()) GTEST_SKIP() << "clamp bounds are those of our own server";
  Session s(options_for(server.connect, 100ms));  // below minSessionTimeout (1000 ms)
  EXPECT_EQ(s.negotiated_timeout(), 1000ms);
}

TEST(SessionTest, BasicOperations) {
  auto server = shared_server();
  Session s(options_for(server.connect));
  const std::string base = unique_path("ops");
  EXPECT_EQ(s.create(base + "/a/b", "hello", CreateMode::kPersistent, true), base + "/a/b");
  auto got = s.get(base + "/a/b");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->data, "hello");
  EXPECT_GT(got->stat.czxid, 0);
  EXPECT_EQ(s.set(base + "/a/b", "bye").version, 1);
  EXPECT_THROW(s.set(base + "/a/b", "x", 0), Error);  // version mismatch
  EXPECT_THROW(s.create(base + "/a/b"), Error);       // exists
  auto kids = s.children(base + "/a");
  ASSERT_TRUE(kids);
  EXPECT_EQ(*kids, std::vector<std::string>{"b"});
  EXPECT_FALSE(s.get(base + "/missing"));
  EXPECT_FALSE(s.children(base + "/missing"));
  EXPECT_TRUE(s.remove(base + "/a/b"));
  EXPECT_FALSE(s.remove(base + "/a/b"));
  EXPECT_THROW(s.get("relative"), InvalidArgumentError);
}

TEST(SessionTest, BadInputIsRejectedWithTypedErrors) {
  auto expect_invalid = [](SessionOptions o) {
    EXPECT_THROW(Session{o}, InvalidArgumentError) << "connect=\"" << o.connect << "\"";
  };
  auto server = shared_server();
  SessionOptions base = options_for(server.connect);
  for (const char* connect :
       {"", "localhost", "127.0.0.1:", ":2181", "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:21x",
        "127.0.0.1:2181,", "127.0.0.1:2181//x", "127.0.0.1:2181/x/", "127.0.0.1:2181/a/../b",
        "127.0.0.1:2181/", "/chroot-only"}) {
    SessionOptions o = base;
    o.connect = connect;
    expect_invalid(o);
  }
  SessionOptions o = base;
  o.session_timeout = 0ms;
  expect_invalid(o);
  o = base;
  o.connect_timeout = -1ms;
  expect_invalid(o);
  o = base;
  o.lost_margin = 10s;
  expect_invalid(o);
}

TEST(SessionTest, NoServerListeningFailsWithinTheConnectTimeout) {
  SessionOptions o = options_for("127.0.0.1:" + std::to_string(pick_free_port()));
  o.connect_timeout = 700ms;
  const auto start = Clock::now();
  EXPECT_THROW(Session{o}, ConnectionLossError);
  EXPECT_LT(Clock::now() - start, 10s);  // bounded, not a speed goal
}

TEST(SessionTest, UnresolvableHostGivesATypedError) {
  SessionOptions o = options_for("no-such-host.invalid:2181");
  o.connect_timeout = 700ms;
  try {
    Session s(o);
    FAIL() << "connected to an unresolvable host";
  } catch (const InvalidArgumentError&) {
  } catch (const ConnectionLossError&) {
  }
}

TEST(SessionTest, ChrootIsApplied) {
  auto server = shared_server();
  const std::string root = unique_path("chroot");
  {
    Session plain(options_for(server.connect));
    plain.create(root, {}, CreateMode::kPersistent, true);
  }
  Session s(options_for(server.connect + root));
  s.create("/inside", "x");
  Session plain(options_for(server.connect));
  EXPECT_TRUE(plain.get(root + "/inside"));
}

TEST(SessionTest, FrozenServerGivesSuspendedThenLostBeforeExpiryThenANewSession) {
  if (using_external_server()) GTEST_SKIP() << "needs a server of its own to freeze";
  auto server = ZkServer::start({200, 1000, 60000, false, {}});
  Session s(options_for(server->connect_string(), 3000ms));
  EventLog log(s);
  const auto first_id = s.session_id();
  const auto timeout = s.negotiated_timeout();
  ASSERT_EQ(timeout, 3000ms);

  const auto frozen_at = Clock::now();
  server->freeze();
  ASSERT_TRUE(log.wait_for(SessionState::kSuspended, timeout));
  EXPECT_LT(*log.first(SessionState::kSuspended) - frozen_at, timeout * 2 / 3);
  // Nothing is answered while frozen: the Lost deadline stands still from here on.
  const auto deadline = s.lost_deadline();
  ASSERT_TRUE(log.wait_for(SessionState::kLost, timeout * 2));
  const auto lost_at = *log.first(SessionState::kLost);
  // Lost comes before (send time of the last answered request) + T = deadline + margin.
  const auto margin = std::chrono::duration_cast<std::chrono::milliseconds>(
      detail::SessionAccess::core(s)->settings().lost_margin);
  EXPECT_LT(lost_at, deadline + margin);
  EXPECT_GE(lost_at, deadline);
  EXPECT_EQ(s.state() == SessionState::kConnected, false);

  server->thaw();
  ASSERT_TRUE(wait_until([&] { return s.state() == SessionState::kConnected; }, 20s));
  ASSERT_TRUE(log.wait_last(SessionState::kConnected, 5s));
  EXPECT_EQ(s.generation(), 2u);
  EXPECT_NE(s.session_id(), first_id);
  EXPECT_EQ(log.states(),
            (std::vector<SessionState>{SessionState::kSuspended, SessionState::kLost,
                                       SessionState::kConnecting, SessionState::kConnected}));
}

TEST(SessionTest, ShortServerRestartKeepsTheSameSession) {
  if (using_external_server()) GTEST_SKIP() << "needs a server of its own to restart";
  auto server = ZkServer::start();
  Session s(options_for(server->connect_string(), 8000ms));
  EventLog log(s);
  const auto id = s.session_id();
  server->stop();
  ASSERT_TRUE(log.wait_for(SessionState::kSuspended, 8s));
  server->restart();
  ASSERT_TRUE(log.wait_for(SessionState::kConnected, 8s));
  EXPECT_EQ(s.session_id(), id);
  EXPECT_EQ(s.generation(), 1u);
  EXPECT_EQ(log.states(),
            (std::vector<SessionState>{SessionState::kSuspended, SessionState::kConnected}));
}

TEST(SessionTest, SessionExpiredOnTheServerIsReportedLost) {
  auto server = shared_server();
  Session s(options_for(server.connect, 4000ms));
  EventLog log(s);
  const auto id = s.session_id();
  ASSERT_EQ(detail::SessionAccess::core(s)->session_password().size(), 16u);
  ASSERT_TRUE(expire_on_server(s, server.connect));
  ASSERT_TRUE(log.wait_for(SessionState::kLost, 5s));
  ASSERT_TRUE(wait_until([&] { return s.state() == SessionState::kConnected; }, 10s));
  ASSERT_TRUE(log.wait_last(SessionState::kConnected, 5s));
  EXPECT_EQ(s.generation(), 2u);
  EXPECT_NE(s.session_id(), id);
  const auto states = log.states();
  ASSERT_GE(states.size(), 3u);
  EXPECT_EQ(states[states.size() - 3], SessionState::kLost);
  EXPECT_EQ(states[states.size() - 2], SessionState::kConnecting);
  EXPECT_EQ(states.back(), SessionState::kConnected);
}

TEST(SessionTest, EnsembleKeepsTheSessionThroughALeaderKill) {
  if (using_external_server()) GTEST_SKIP() << "starts an ensemble of its own";
  auto ensemble = ZkEnsemble::start(3);
  Session s(options_for(ensemble->connect_string(), 8000ms));
  const auto id = s.session_id();
  s.create("/survives", "before");
  ensemble->kill_leader();
  ASSERT_TRUE(ensemble->wait_for_leader(30s));
  ASSERT_TRUE(wait_until(
      [&] {
        try {
          return s.get("/survives").has_value();
        } catch (const Error&) {
          return false;
        }
      },
      20s));
  EXPECT_EQ(s.session_id(), id);
  EXPECT_EQ(s.generation(), 1u);
  EXPECT_NE(s.state(), SessionState::kLost);
}

TEST(SessionTest, ListenersSeeEachTransitionOnceAndRemovalStopsThem) {
  auto server = shared_server();
  Session s(options_for(server.connect));
  EventLog kept(s);
  std::atomic<int> calls{0};
  auto id = s.add_listener([&](const SessionEvent&) { ++calls; });
  s.remove_listener(id);
  s.close();
  EXPECT_TRUE(wait_until([&] { return !kept.states().empty(); }, 5s));
  EXPECT_EQ(kept.states(), std::vector<SessionState>{SessionState::kClosed});
  EXPECT_EQ(calls.load(), 0);
}

}  // namespace
}  // namespace zklock::testing

namespace zklock::testing {
namespace {

// Review 3, item 10: an asynchronous request's deadline task must go when the request is settled,
// not stay in the session's schedule until the deadline (with hour-long deadlines: for an hour,
// about 150 bytes per acquisition - memory that grows with the acquisition rate).
TEST(SessionTest, AnAsyncRequestsDeadlineGoesWhenTheRequestIsSettled) {
  auto server = shared_server();
  Session s(options_for(server.connect));
  Mutex m(s, unique_path("async-deadlines"));
  const auto& core = detail::SessionAccess::core(s);
  const std::size_t before = core->scheduled_tasks();
  for (int i = 0; i < 1000; ++i) {
    Hold hold = m.lock_future(AsyncLockOptions::within(std::chrono::hours(1))).get();
    hold.unlock();
  }
  EXPECT_LE(core->scheduled_tasks(), before + 10)
      << core->scheduled_tasks() - before << " deadline tasks left for 1000 finished requests";
}

}  // namespace
}  // namespace zklock::testing

namespace zklock::testing {
namespace {

// The lag through an ensemble is a whole tickTime (server_topology.h), which a client cannot
// read: the session bounds it by the smallest timeout the ensemble grants - its own, and that of
// a probe session asking for 1 s, which the server raises to its minSessionTimeout (2 x tickTime
// by default). Here tickTime is 2 s: the session's own 6 s would bound it at 3 s, the probe at 2 s.
TEST(SessionTest, TheEnsemblesTickIsLearnedFromWhatItGrants) {
  if (using_external_server()) GTEST_SKIP() << "starts an ensemble of its own";
  auto ensemble = ZkEnsemble::start(3, ServerOptions{2000, 4000, 40000, false, {}});
  Session s(options_for(ensemble->connect_string(), 6000ms));
  const auto& core = detail::SessionAccess::core(s);
  // Both learned: the topology (until then the lag is a tick as well) and the tick.
  EXPECT_TRUE(wait_until(
      [&] {
        return core->topology() == detail::ServerTopology::kEnsemble &&
               core->confirmation_lag() == 2000ms;
      },
      15s))
      << "topology " << detail::to_string(core->topology()) << ", lag in use: "
      << std::chrono::duration_cast<std::chrono::milliseconds>(core->confirmation_lag()).count()
      << " ms";
  // Told, it believes the application.
  SessionOptions told = options_for(ensemble->connect_string(), 6000ms);
  told.server_tick_time = 1500ms;
  Session t(told);
  const auto& told_core = detail::SessionAccess::core(t);
  EXPECT_TRUE(
      wait_until([&] { return told_core->topology() == detail::ServerTopology::kEnsemble; }, 15s));
  EXPECT_EQ(told_core->confirmation_lag(), 1500ms);
}

}  // namespace
}  // namespace zklock::testing
