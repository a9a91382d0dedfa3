// zklock::Mutex with a lock-delay (MutexOptions::lock_delay) against a real server: a clean
// release hands on at once - on the fast path, down a queue, to a contender that comes later -
// and an unclean end (an expired session, a node deleted by an operator, a release without the
// mark) holds the next holder back for the delay, which never outlasts a deadline silently.
//
// How the tests tell without timing the library's speed: a handover that must be at once is given
// a deadline far shorter than the delay (had the delay been applied, the call would time out); a
// delay that must be honoured is checked as a lower bound - the lock is acquired no sooner than
// the delay after the moment the test ended the holder, which can only be later still on a slow
// machine.
#include <zookeeper/zookeeper.h>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "expire_session.h"
#include "scripted_hook.h"
#include "support/raw_zk_client.h"
#include "test_env.h"
#include "waiter.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Long enough that a handover that waited it would outlast every deadline below.
constexpr auto kLongDelay = std::chrono::milliseconds(120s);
// Short enough to wait out in a test; long enough against an unheld handover (milliseconds).
constexpr auto kShortDelay = std::chrono::milliseconds(3s);
constexpr auto kDeadline = 30s;

MutexOptions with_delay(std::chrono::milliseconds delay) {
  MutexOptions options;
  options.lock_delay = delay;
  return options;
}

// Milliseconds from `from` to `to` (a figure the failure message can show).
long long ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

// Waits on its own thread for `m` until `deadline`; acquired() if it got the lock.
Waiter try_for(Mutex& m, std::chrono::seconds deadline) {
  return Waiter([&m, deadline] {
    if (!m.try_lock_for(deadline)) throw std::runtime_error("timed out");
  });
}

class MutexLockDelay : public ::testing::Test {
 protected:
  MutexLockDelay() : server_(shared_server()), path_(unique_path("delay")) {}

  SessionOptions opts() const { return options_for(server_.connect, 4000ms); }
  // Waits until `count` contenders are queued on the path.
  bool queued(Session& s, std::size_t count) {
    return wait_until([&] { return lock_children(s, path_).size() == count; }, 10s);
  }

  // Paths under the lock path that session `id` watches on the server (wchc).
  std::size_t watches_of_session(std::int64_t id) const {
    const auto by_session = parse_wchc(four_letter_word(server_.port, "wchc"));
    const auto it = by_session.find(id);
    if (it == by_session.end()) return 0;
    std::size_t n = 0;
    for (const auto& p : it->second) n += p.compare(0, path_.size(), path_) == 0 ? 1 : 0;
    return n;
  }

  const ServerRef server_;
  const std::string path_;
};

TEST_F(MutexLockDelay, ACleanReleaseHandsOnAtOnce) {
  Session a(opts());
  auto recorded = scripted_session(opts(), nullptr);  // the waiter's requests, in order
  Mutex holder(a, path_, with_delay(kLongDelay)),
      next(*recorded.session, path_, with_delay(kLongDelay));
  // The lock path is new: nothing ended before us, so the first holder is not held back either.
  ASSERT_TRUE(holder.try_lock_for(kDeadline));
  Waiter waiter = try_for(next, kDeadline);
  // The waiter's watches are set on the server - on the lock path's data (for the mark), the
  // holder's node and its own node - before the holder lets go: the fast path.
  ASSERT_TRUE(
      wait_until([&] { return watches_of_session(recorded.session->session_id()) == 3; }, 10s));
  const auto mark_reads = [&] {  // reads of the lock path's data by the waiter
    std::size_t n = 0;
    for (const auto& [op, path] : recorded.hook->seen()) {
      n += op == Operation::kGetData && path == path_ ? 1 : 0;
    }
    return n;
  };
  const std::size_t reads_before = mark_reads();
  holder.unlock();
  waiter.join();
  EXPECT_TRUE(waiter.acquired()) << waiter.error();
  // The watch told of the mark: no read after the release (no round trip added to the handover).
  EXPECT_EQ(mark_reads(), reads_before);
  // The release left its mark on the lock path, in the same multi as the delete.
  const auto mark = a.get(path_);
  ASSERT_TRUE(mark.has_value());
  EXPECT_EQ(mark->data.rfind("zklock-released ", 0), 0u) << mark->data;
  next.unlock();
}

TEST_F(MutexLockDelay, CleanReleasesHandOnDownAQueue) {
  // The third in line waits behind a waiter, not behind the holder: it learns of its turn from a
  // listing, which reads the mark in the same round trip.
  Session a(opts()), b(opts()), c(opts());
  Mutex first(a, path_, with_delay(kLongDelay)), second(b, path_, with_delay(kLongDelay)),
      third(c, path_, with_delay(kLongDelay));
  ASSERT_TRUE(first.try_lock_for(kDeadline));
  Waiter second_waits = try_for(second, kDeadline);
  ASSERT_TRUE(queued(a, 2));
  Waiter third_waits = try_for(third, kDeadline);
  ASSERT_TRUE(queued(a, 3));
  first.unlock();
  second_waits.join();
  ASSERT_TRUE(second_waits.acquired()) << second_waits.error();
  second.unlock();
  third_waits.join();
  EXPECT_TRUE(third_waits.acquired()) << third_waits.error();
  third.unlock();
}

TEST_F(MutexLockDelay, AContenderThatComesAfterACleanReleaseIsNotHeldBack) {
  Session a(opts()), b(opts());
  {
    Mutex earlier(a, path_, with_delay(kLongDelay));
    ASSERT_TRUE(earlier.try_lock_for(kDeadline));
    earlier.unlock();
  }
  ASSERT_TRUE(queued(a, 0));
  Mutex later(b, path_, with_delay(kLongDelay));
  EXPECT_TRUE(later.try_lock_for(kDeadline));
  later.unlock();
}

TEST_F(MutexLockDelay, AnExpiredHolderHoldsTheWaiterBackForTheDelay) {
  Session a(opts()), b(opts());
  Mutex holder(a, path_, with_delay(kShortDelay)), next(b, path_, with_delay(kShortDelay));
  ASSERT_TRUE(holder.try_lock_for(kDeadline));
  Waiter waiter = try_for(next, kDeadline);
  ASSERT_TRUE(queued(a, 2));
  const auto ended = Clock::now();
  ASSERT_TRUE(expire_on_server(a, server_.connect));  // its node goes unreleased
  waiter.join();
  ASSERT_TRUE(waiter.acquired()) << waiter.error();
  EXPECT_GE(ms_between(ended, waiter.acquired_at()), kShortDelay.count());
  EXPECT_EQ(holder.state(), LockState::kLost);
  next.unlock();
}

TEST_F(MutexLockDelay, ANodeDeletedByAnOperatorHoldsTheWaiterBack) {
  Session a(opts()), b(opts()), operator_session(opts());
  Mutex holder(a, path_, with_delay(kShortDelay)), next(b, path_, with_delay(kShortDelay));
  ASSERT_TRUE(holder.try_lock_for(kDeadline));
  Waiter waiter = try_for(next, kDeadline);
  ASSERT_TRUE(queued(a, 2));
  const auto ended = Clock::now();
  ASSERT_TRUE(operator_session.remove(holder.acquisition()->node_path));
  waiter.join();
  ASSERT_TRUE(waiter.acquired()) << waiter.error();
  EXPECT_GE(ms_between(ended, waiter.acquired_at()), kShortDelay.count());
  next.unlock();
}

TEST_F(MutexLockDelay, AContenderThatComesAfterAnUncleanEndWaitsTheDelayAndThenReleasesCleanly) {
  Session a(opts()), b(opts()), c(opts());
  Mutex holder(a, path_, with_delay(kShortDelay));
  ASSERT_TRUE(holder.try_lock_for(kDeadline));
  ASSERT_TRUE(expire_on_server(a, server_.connect));
  ASSERT_TRUE(queued(b, 0));
  // Nobody waited: the newcomer sees only that a node went since the last clean release.
  const auto ended = Clock::now();
  Mutex newcomer(b, path_, with_delay(kShortDelay));
  ASSERT_TRUE(newcomer.try_lock_for(kDeadline));
  EXPECT_GE(ms_between(ended, Clock::now()), kShortDelay.count());
  newcomer.unlock();
  ASSERT_TRUE(queued(c, 0));  // unlock() does not wait for the delete
  // Its clean release resets the history: the next one is not held back.
  Mutex after(c, path_, with_delay(kLongDelay));
  EXPECT_TRUE(after.try_lock_for(kDeadline));
  after.unlock();
}

TEST_F(MutexLockDelay, AnUncleanEndBetweenTheReadAndTheCreateIsNotMissed) {
  // The lock path is quiet after a clean release when the newcomer reads it; before its create
  // reaches the server, another contender takes the lock and its session ends unreleased. The
  // newcomer is then first at once, but its sequence tells that nodes came and went after the read.
  Session a(opts()), other(opts());
  {
    Mutex earlier(a, path_, with_delay(kShortDelay));
    ASSERT_TRUE(earlier.try_lock_for(kDeadline));
    earlier.unlock();
  }
  ASSERT_TRUE(queued(a, 0));
  Clock::time_point ended{};
  bool ended_unreleased = false;
  auto newcomer_session = one_shot_session(
      opts(), [&](Operation op, std::string_view path) -> std::optional<FaultDecision> {
        if (op != Operation::kCreate || path.find(path_ + "/") != 0) return std::nullopt;
        // The newcomer's read of the lock path has been sent; its create waits for this.
        Mutex between(other, path_, with_delay(kShortDelay));
        if (between.try_lock_for(kDeadline)) {
          ended = Clock::now();
          ended_unreleased = expire_on_server(other, server_.connect) && queued(a, 0);
        }
        return FaultDecision::pass();
      });
  Mutex newcomer(*newcomer_session.session, path_, with_delay(kShortDelay));
  ASSERT_TRUE(newcomer.try_lock_for(kDeadline));
  const auto acquired = Clock::now();
  ASSERT_TRUE(newcomer_session.hook->fired());
  ASSERT_TRUE(ended_unreleased) << "the contender in between did not take the lock and end";
  EXPECT_GE(ms_between(ended, acquired), kShortDelay.count());
  newcomer.unlock();
}

TEST_F(MutexLockDelay, ADeadlineThatEndsDuringTheDelayTimesOutAndLeavesNothing) {
  Session a(opts()), b(opts());
  Mutex holder(a, path_, with_delay(kLongDelay)), next(b, path_, with_delay(kLongDelay));
  ASSERT_TRUE(holder.try_lock_for(kDeadline));
  std::atomic<int> result{-1};
  std::thread waiter([&] { result = next.try_lock_for(10s) ? 1 : 0; });
  ASSERT_TRUE(queued(a, 2));
  ASSERT_TRUE(expire_on_server(a, server_.connect));
  ASSERT_TRUE(wait_until([&] { return result != -1; }, 30s));
  waiter.join();
  EXPECT_EQ(result.load(), 0);
  EXPECT_EQ(next.state(), LockState::kNotHeld);
  EXPECT_TRUE(queued(b, 0)) << "the timed-out contender's node is left";

  // The same for an asynchronous request: its handler hears of the timeout.
  Mutex third(a, path_, with_delay(kLongDelay));
  std::promise<std::error_code> outcome;
  auto request =
      third.async_lock([&outcome](std::error_code error, Hold) { outcome.set_value(error); },
                       AsyncLockOptions::within(3s));
  auto future = outcome.get_future();
  ASSERT_EQ(future.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(future.get(), make_error_code(Errc::timed_out));
  EXPECT_TRUE(queued(b, 0)) << "the timed-out request's node is left";
}

TEST_F(MutexLockDelay, AReleaseWhoseMarkIsRefusedStillDeletesItsNode) {
  // The lock path lets everyone read, create and delete children, but not write its data: the
  // mark is refused, and the release deletes its node without it.
  RawZkClient raw(server_.connect);
  ASSERT_TRUE(raw.wait_connected());
  raw.create("/zklock-test");  // may exist
  struct ACL entries[] = {
      {ZOO_PERM_READ | ZOO_PERM_CREATE | ZOO_PERM_DELETE, ZOO_ANYONE_ID_UNSAFE}};
  struct ACL_vector acl = {1, entries};
  ASSERT_EQ(zoo_create(raw.handle(), path_.c_str(), "", 0, &acl, 0, nullptr, 0), ZOK);
  Session a(opts()), b(opts());
  std::atomic<int> release_errors{0};
  MutexOptions options = with_delay(kLongDelay);
  options.on_release_error = [&](const std::string&, std::error_code) { ++release_errors; };
  Mutex holder(a, path_, options);
  ASSERT_TRUE(holder.try_lock_for(kDeadline));  // a new path: not held back
  holder.unlock();
  EXPECT_TRUE(queued(a, 0)) << "the release left its node";
  EXPECT_EQ(release_errors.load(), 0);
  // Unmarked, that release looks unclean to the next contender: it is held back (the safe side).
  Mutex next(b, path_, with_delay(kLongDelay));
  EXPECT_FALSE(next.try_lock_for(3s));
  EXPECT_TRUE(queued(b, 0));
}

TEST_F(MutexLockDelay, IsAMutexOptionOnly) {
  Session s(opts());
  EXPECT_THROW(SharedMutex(s, path_, with_delay(kShortDelay)), InvalidArgumentError);
  EXPECT_THROW(Mutex(s, path_, with_delay(-1ms)), InvalidArgumentError);
}

}  // namespace
}  // namespace zklock::testing
