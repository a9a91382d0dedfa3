// zklock::Mutex leaves nothing behind: no watch after a give-up that races a watch or follows a
// lost reply, no node of ours that our own next lock() queues behind, no parent created where it
// need not be, and no duplicate node after a lost create reply.
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "held_lock.h"
#include "scripted_hook.h"
#include "session/session_core.h"
#include "test_env.h"
#include "waiter.h"
#include "zklock/testing/fault_hook.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

// Watches of session `session_id` on the server at `port`, on paths under `prefix`.
std::vector<std::string> watches_of(int port, std::int64_t session_id, const std::string& prefix) {
  std::vector<std::string> out;
  const auto by_session = parse_wchc(four_letter_word(port, "wchc"));
  const auto it = by_session.find(session_id);
  if (it == by_session.end()) return out;
  for (const auto& p : it->second) {
    if (p.compare(0, prefix.size(), prefix) == 0) out.push_back(p);
  }
  return out;
}

// Issue 12, item 8a: giving up while the read that sets the predecessor watch is still on its way.
// The C client's watch removal finds no watch of its own yet and sends nothing; the read's answer
// then arms the watch on the server - where it used to stay.
TEST(MutexCleanupTest, GivingUpWhileThePredecessorReadIsInFlightLeavesNoWatch) {
  if (using_external_server()) GTEST_SKIP() << "freezes its own server";
  auto server = ZkServer::start();
  const std::string path = "/cleanup/in-flight-watch";
  Session holder_session(options_for(server->connect_string(), 8000ms));
  Mutex holder(holder_session, path);
  holder.lock();
  const std::string holder_node = holder.acquisition()->node_path;
  auto scripted =
      one_shot_session(options_for(server->connect_string(), 8000ms),
                       [&](Operation op, std::string_view p) -> std::optional<FaultDecision> {
                         if (op != Operation::kGetData || p != holder_node) return std::nullopt;
                         server->freeze();  // the read goes out, and waits in the server's socket
                         return FaultDecision::pass();
                       });
  Session& s = *scripted.session;
  Mutex m(s, path);
  std::atomic<int> result{-1};
  std::thread waiter([&] { result = m.try_lock_for(20s) ? 1 : 0; });
  ASSERT_TRUE(wait_until([&] { return scripted.hook->fired(); }, 10s));
  m.cancel();  // gives up with the watch read unanswered
  ASSERT_TRUE(wait_until([&] { return result != -1; }, 10s));
  server->thaw();
  waiter.join();
  EXPECT_EQ(result.load(), 0);
  // Our node goes (its delete was queued behind the read), and with it any watch we set. (The
  // holder's session went Suspended while the server was frozen and may be between connections
  // for a moment after the thaw: a read lost with a connection is polled again.)
  ASSERT_TRUE(wait_until(
      [&] {
        try {
          return lock_children(holder_session, path).size() == 1;
        } catch (const ConnectionLossError&) {
          return false;
        }
      },
      10s));
  EXPECT_TRUE(
      wait_until([&] { return watches_of(server->port(), s.session_id(), path).empty(); }, 3s))
      << "a watch of ours is left on " << holder_node;
  holder.unlock();
}

// Issue 12, item 8b: the predecessor read's answer is lost (the watch was set all the same); the
// read is retried; then the waiter gives up. The stale bookkeeping of the first read used to keep
// the server-side watch in place.
TEST(MutexCleanupTest, GivingUpAfterALostPredecessorReplyLeavesNoWatch) {
  HeldLock held("lost-watch-reply");
  const std::string holder_node = held.holder.acquisition()->node_path;
  std::atomic<int> reads{0};
  auto scripted =
      scripted_session(options_for(held.server.connect),
                       [&](Operation op, std::string_view p) -> std::optional<FaultDecision> {
                         if (op == Operation::kGetData && p == holder_node && reads++ == 0) {
                           return FaultDecision::lose_reply(Errc::connection_loss);
                         }
                         return std::nullopt;
                       });
  Session& s = *scripted.session;
  Mutex m(s, held.path);
  Waiter w(m);
  ASSERT_TRUE(wait_until([&] { return reads >= 2; }, 10s)) << "the lost read was not retried";
  ASSERT_TRUE(wait_until(
      [&] { return !watches_of(held.server.port, s.session_id(), held.path).empty(); }, 5s));
  m.cancel();
  ASSERT_TRUE(wait_until([&] { return w.done(); }, 10s));
  EXPECT_TRUE(w.cancelled()) << w.error();
  EXPECT_TRUE(wait_until(
      [&] { return watches_of(held.server.port, s.session_id(), held.path).empty(); }, 3s))
      << "a watch of ours is left on " << holder_node;
  held.holder.unlock();
}

// Issue 12, item 9: a release whose delete fails for a reason worth retrying (throttled) is
// retried; the next lock() in the same session does not queue behind our own old node.
TEST(MutexCleanupTest, AThrottledReleaseIsRetried) {
  FaultedSession f("throttled-delete", fault_on(Operation::kDelete, "",
                                                FaultDecision::fail_before_send(Errc::throttled)));
  Mutex m(f.session, f.path);
  m.lock();
  m.unlock();
  ASSERT_TRUE(f.hook.fired());
  EXPECT_TRUE(wait_until([&] { return lock_children(f.session, f.path).empty(); }, 5s))
      << "the node stayed";
  EXPECT_TRUE(m.try_lock_for(5s));
  m.unlock();
}

// Issue 12, item 9: a release whose delete is refused for good (here: not authorized) is reported
// through on_release_error, and our own next lock() in that session does not wait behind the node
// we could not delete (it goes when the session ends).
TEST(MutexCleanupTest, AReleaseRefusedForGoodIsReportedAndDoesNotBlockOurNextLock) {
  auto server = shared_server();
  const std::string path = unique_path("refused-delete");
  std::mutex mutex;
  std::string first_node;
  auto scripted =
      scripted_session(options_for(server.connect),
                       [&](Operation op, std::string_view p) -> std::optional<FaultDecision> {
                         std::lock_guard lock(mutex);
                         if (op == Operation::kDelete && p == first_node)
                           return FaultDecision::fail_before_send(Errc::no_auth);
                         return std::nullopt;
                       });
  Session& s = *scripted.session;
  std::mutex reports_mutex;
  std::vector<std::pair<std::string, std::error_code>> reports;
  MutexOptions mo;
  mo.on_release_error = [&](const std::string& node, std::error_code ec) {
    std::lock_guard lock(reports_mutex);
    reports.emplace_back(node, ec);
  };
  Mutex m(s, path, mo);
  m.lock();
  const std::string node = m.acquisition()->node_path;  // not under `mutex`: the hook takes it
  {                                                     // while the Mutex holds its own lock
    std::lock_guard lock(mutex);
    first_node = node;
  }
  m.unlock();
  ASSERT_TRUE(wait_until(
      [&] {
        std::lock_guard lock(reports_mutex);
        return !reports.empty();
      },
      5s))
      << "the refused delete was not reported";
  {
    std::lock_guard lock(reports_mutex);
    EXPECT_EQ(reports.front().first, first_node);
    EXPECT_EQ(reports.front().second, make_error_code(Errc::no_auth));
  }
  EXPECT_TRUE(m.try_lock_for(5s)) << "our next lock() queued behind our own old node";
  m.unlock();
  Session other(options_for(server.connect));
  s.close();  // the node we could not delete goes with the session
  EXPECT_TRUE(wait_until([&] { return lock_children(other, path).empty(); }, 5s));
}

// Issue 12, item 10: an application that owns only /app can lock /app/locks/job when "/" is
// read-only: only the missing parents are created (ZooKeeper checks CREATE on the parent before it
// checks whether the node exists, so creating an existing ancestor fails with NOAUTH).
TEST(MutexCleanupTest, ParentsAreCreatedOnlyWhereMissing) {
  if (using_external_server()) GTEST_SKIP() << "changes the ACL of \"/\"";
  auto server = ZkServer::start();
  // Set up as an administrator would: /app belongs to app:secret, "/" becomes read-only.
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  zhandle_t* zh =
      zookeeper_init(server->connect_string().c_str(), nullptr, 4000, nullptr, nullptr, 0);
  ASSERT_NE(zh, nullptr);
  ASSERT_TRUE(wait_until([&] { return zoo_state(zh) == ZOO_CONNECTED_STATE; }, 10s));
  const std::string credentials = "app:secret";
  ASSERT_EQ(zoo_add_auth(zh, "digest", credentials.data(), static_cast<int>(credentials.size()),
                         nullptr, nullptr),
            ZOK);
  ASSERT_EQ(zoo_create(zh, "/app", "", 0, &ZOO_CREATOR_ALL_ACL, 0, nullptr, 0), ZOK);
  ASSERT_EQ(zoo_set_acl(zh, "/", -1, &ZOO_READ_ACL_UNSAFE), ZOK);
  zookeeper_close(zh);

  SessionOptions o = options_for(server->connect_string());
  o.credentials = DigestCredentials{"app", "secret"};
  Session s(o);
  Mutex m(s, "/app/locks/job");
  EXPECT_TRUE(m.try_lock_for(10s));
  EXPECT_TRUE(s.get("/app/locks").has_value());
  m.unlock();
}

// Issue 12, item 4: after a lost create reply the recovery listing must not be served by a server
// that has not applied our create yet: a `sync` goes before it.
TEST(MutexCleanupTest, RecoveryAfterALostCreateReplySyncsBeforeItLists) {
  FaultedSession f("recovery-sync", fault_on(Operation::kCreate, "-lock-",
                                             FaultDecision::lose_reply(Errc::connection_loss)));
  Mutex m(f.session, f.path);
  m.lock();
  ASSERT_TRUE(f.hook.fired());
  const auto seen = f.hook.seen();
  // After the create whose reply was lost, the requests on the lock path itself: the pipelined
  // listing (at most one), then the recovery: a sync, then its listing. Only the lock path's own
  // requests count: the session's own (a heartbeat on "/", the read of /zookeeper/config) come
  // from other threads and may fall anywhere in between (CI saw both).
  std::size_t create = seen.size();
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (seen[i].first == Operation::kCreate && seen[i].second.find("-lock-") != std::string::npos) {
      create = i;
      break;
    }
  }
  ASSERT_LT(create, seen.size());
  std::vector<Operation> on_path;
  for (std::size_t i = create + 1; i < seen.size(); ++i) {
    if (seen[i].second == f.path) on_path.push_back(seen[i].first);
  }
  const auto sync = std::find(on_path.begin(), on_path.end(), Operation::kSync);
  ASSERT_NE(sync, on_path.end()) << "no sync of the lock path after the lost create";
  EXPECT_LE(std::count(on_path.begin(), sync, Operation::kGetChildren), 1)
      << "a listing other than the pipelined one came before the sync";
  ASSERT_NE(sync + 1, on_path.end()) << "no listing after the sync";
  EXPECT_EQ(*(sync + 1), Operation::kGetChildren)
      << "the recovery's next request on the lock path after its sync is not the listing";
  EXPECT_EQ(lock_children(f.session, f.path).size(), 1u);
  m.unlock();
}

// A give-up whose watch removal is lost with its connection (the session's forced reconnect of a
// stalled connection fails what is in flight): the C client still has the watcher and sets it
// again on the next connection. The removal is sent again once that connection is up.
TEST(MutexCleanupTest, AWatchRemovalLostWithItsConnectionIsSentAgainOnTheNext) {
  HeldLock held("lost-removal");
  auto scripted =
      one_shot_session(options_for(held.server.connect),
                       fault_on(Operation::kRemoveWatches, held.path,
                                FaultDecision::fail_before_send(Errc::connection_loss)));
  Session& s = *scripted.session;
  Mutex m(s, held.path);
  EXPECT_FALSE(m.try_lock_for(300ms));
  ASSERT_TRUE(scripted.hook->fired());
  ASSERT_TRUE(wait_until([&] { return held.nodes().size() == 1u; }, 10s));
  // The removal never went out: the server still has our watch on the holder's node.
  ASSERT_FALSE(watches_of(held.server.port, s.session_id(), held.path).empty());
  const auto connection = detail::SessionAccess::core(s)->connection();
  ASSERT_TRUE(connection);
  ASSERT_TRUE(connection->force_reconnect(/*even_if_connected=*/true).has_value());
  EXPECT_TRUE(wait_until(
      [&] { return watches_of(held.server.port, s.session_id(), held.path).empty(); }, 10s))
      << "a watch of ours is left on " << held.path;
}

}  // namespace
}  // namespace zklock::testing

namespace zklock::testing {
namespace {

void make_lock_path(const std::string& connect, const std::string& path) {
  Session s(options_for(connect));
  Mutex m(s, path);
  m.lock();  // creates the path
  m.unlock();
}

// Review 3, item 7 (CURATOR-79): giving up while the attempt is recovering from a lost create
// reply (our node exists, its path is not known yet) must not leave that node in the queue: the
// recovery goes on in the background and deletes what it finds. The scene of both tests below: a
// new lock path on the shared server that exists beforehand, and `mutex` on it in a session where
// the first create's reply is lost (the node IS created) and the recovery's listing keeps failing
// until `stall` is cleared.
struct LostCreateRecovery {
  explicit LostCreateRecovery(const std::string& stem)
      : server(shared_server()),
        path(unique_path(stem)),
        scripted(scripted_session(options_for(server.connect), action())),
        mutex(*scripted.session, path) {
    make_lock_path(server.connect, path);
  }

  // Once the attempt has given up: lets the recovery list again, then expects it to have deleted
  // our node - the queue empties, and the lock is free for another session.
  void expect_no_node_left() {
    stall = false;
    Session other(options_for(server.connect));
    EXPECT_TRUE(wait_until([&] { return lock_children(other, path).empty(); }, 3s))
        << "left in the queue: " << ::testing::PrintToString(lock_children(other, path));
    Mutex next(other, path);
    EXPECT_TRUE(next.try_lock_for(3s)) << "the lock is held by nobody";
    next.unlock();
  }

  const ServerRef server;
  const std::string path;
  std::atomic<bool> lost{false};
  std::atomic<bool> stall{true};
  const ScriptedSession scripted;
  Mutex mutex;

 private:
  HookAction action() {
    return [this](Operation op, std::string_view p) -> std::optional<FaultDecision> {
      if (op == Operation::kCreate && p.find("-lock-") != p.npos &&
          p.compare(0, path.size(), path) == 0 && !lost.exchange(true)) {
        return FaultDecision::lose_reply(Errc::connection_loss);  // applied, reply lost
      }
      if (op == Operation::kGetChildren && p == path && lost && stall) {
        return FaultDecision::fail_before_send(Errc::connection_loss);  // recovery keeps failing
      }
      return std::nullopt;
    };
  }
};

TEST(MutexCleanupTest, GivingUpDuringLostCreateRecoveryLeavesNoNode) {
  LostCreateRecovery scene("give-up-recovering");
  EXPECT_FALSE(scene.mutex.try_lock_for(300ms));
  ASSERT_TRUE(scene.lost.load());
  scene.expect_no_node_left();
  // Our own next attempt is not blocked either.
  EXPECT_TRUE(scene.mutex.try_lock_for(3s));
  scene.mutex.unlock();
}

TEST(MutexCleanupTest, AnAsyncDeadlineDuringLostCreateRecoveryLeavesNoNode) {
  LostCreateRecovery scene("async-give-up-recovering");
  auto future = scene.mutex.lock_future(AsyncLockOptions::within(300ms));
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  try {
    future.get();
    ADD_FAILURE() << "acquired";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(Errc::timed_out)) << e.what();
  }
  scene.expect_no_node_left();
}

// Review 3, item 8: the plain RAII pattern ending during a blip - unlock and destroy the Mutex
// while the connection is down. The delete fails with the connection; the retry must not depend
// on the Mutex object still being there.
TEST(MutexCleanupTest, AMutexDestroyedDuringABlipStillDeletesItsNode) {
  if (using_external_server()) GTEST_SKIP() << "freezes its own server";
  auto server = ZkServer::start();
  const std::string path = unique_path("destroyed-in-blip");
  std::atomic<bool> blip{false};
  // The delete sent during the blip fails with the connection (as the forced reconnects make it).
  auto scripted =
      one_shot_session(options_for(server->connect_string(), 6000ms),
                       [&](Operation op, std::string_view) -> std::optional<FaultDecision> {
                         if (op != Operation::kDelete || !blip) return std::nullopt;
                         return FaultDecision::fail_before_send(Errc::connection_loss);
                       });
  Session& s = *scripted.session;
  auto m = std::make_unique<Mutex>(s, path);
  m->lock();
  server->freeze();
  ASSERT_TRUE(wait_until([&] { return s.state() == SessionState::kSuspended; }, 10s));
  blip = true;
  m->unlock();
  m.reset();
  ASSERT_TRUE(scripted.hook->fired());
  server->thaw();
  ASSERT_TRUE(wait_until([&] { return s.state() == SessionState::kConnected; }, 10s));
  Session other(options_for(server->connect_string()));
  EXPECT_TRUE(wait_until([&] { return lock_children(other, path).empty(); }, 1s))
      << "left in the queue: " << ::testing::PrintToString(lock_children(other, path))
      << " - a lock held by nobody while the session lives";
  EXPECT_EQ(s.generation(), 1u);
}

// Review 3, item 17: a create answered "throttled" was never applied (the server's throttler
// drops it before it is processed): try again after a pause, as the Semaphore's lease create
// does, instead of failing lock().
TEST(MutexCleanupTest, AThrottledCreateIsRetried) {
  auto server = shared_server();
  const std::string path = unique_path("throttled-create");
  make_lock_path(server.connect, path);
  std::atomic<int> throttled{0};
  auto scripted = scripted_session(
      options_for(server.connect),
      [&](Operation op, std::string_view p) -> std::optional<FaultDecision> {
        if (op == Operation::kCreate && p.find("-lock-") != p.npos && throttled < 2) {
          ++throttled;
          return FaultDecision::fail_before_send(Errc::throttled);
        }
        return std::nullopt;
      });
  Mutex m(*scripted.session, path);
  EXPECT_NO_THROW(m.lock());
  EXPECT_EQ(throttled.load(), 2);
  EXPECT_EQ(m.state(), LockState::kHeld);
  EXPECT_EQ(lock_children(*scripted.session, path).size(), 1u);
  m.unlock();
}

}  // namespace
}  // namespace zklock::testing
