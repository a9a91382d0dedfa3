// A holder told Lost gets the whole margin before anyone else can be handed its lock - also when
// the session is declared Lost while its connection still works (the server would keep the
// session for another m), and when the thread that delivers callbacks is busy (review 3, item 4).
//
// The holder's session loses every sync and exists answer once it holds (the requests reach the
// server, their answers are dropped in the client seam): its heartbeats confirm nothing while the
// connection stays healthy and the C client's own pings keep the session alive on the server. So
// the session is declared Lost at confirmed + T - m, and the server would expire it only at
// confirmed + T or later. A waiter on another session queues behind the holder.
//
// What is measured decides whether a run tested that (issue 21): the waiter's session is healthy
// and must stay Connected throughout. When it does not (seen under two busy loops: the shared
// server answered nobody for seconds, both sessions Suspended, then Lost), the server did not
// serve its clients and the run is not applicable: it is run again, at most kMaxRuns times. Never
// two holders is required of every run.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "lost_reports.h"
#include "scripted_hook.h"
#include "session_log.h"
#include "test_env.h"
#include "waiter.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kTimeout = 10000ms;
constexpr milliseconds kMargin = 3000ms;
constexpr int kMaxRuns = 3;

struct Handover {
  milliseconds told_to_taken{0};
  bool told = false;
  bool taken = false;
  bool waiter_session_failed = false;  // the healthy session left Connected: not applicable
  std::string holder_log;              // the holder's session, at debug level
};

// One run: the holder's Lost callback time against the waiter's acquisition time. With
// `busy_listener`, a listener of the holder's session takes 1 s over its Lost event first.
Handover run_once(bool busy_listener) {
  auto server = shared_server();
  const std::string path = unique_path("handover");
  std::atomic<bool> held{false};
  SessionOptions o = options_for(server.connect, kTimeout);
  o.lost_margin = kMargin;
  SessionLog log;
  log.attach(o);
  auto scripted = scripted_session(o, [&](Operation op, std::string_view) {
    if (held && (op == Operation::kSync || op == Operation::kExists)) {
      return std::optional(FaultDecision::lose_reply(Errc::connection_loss));
    }
    return std::optional<FaultDecision>();
  });
  if (busy_listener) {
    scripted.session->add_listener([](const SessionEvent& e) {
      if (e.state == SessionState::kLost) std::this_thread::sleep_for(1s);
    });
  }
  LostReports lost;
  Mutex holder(*scripted.session, path, lost.options());
  holder.lock();
  held = true;

  std::atomic<bool> other_failed{false};  // outlives `other` and its listener
  Session other(options_for(server.connect, kTimeout));
  other.add_listener([&](const SessionEvent& e) {
    if (e.state == SessionState::kSuspended || e.state == SessionState::kLost) other_failed = true;
  });
  Mutex waiting(other, path);
  Waiter waiter(waiting);
  EXPECT_TRUE(wait_until([&] { return lock_children(other, path).size() == 2; }, 10s));
  // Lost comes about T - m after the last confirmation; allow 3 T for everything.
  wait_until([&] { return lost.told() && waiter.acquired(); }, 3 * kTimeout);
  Handover h;
  h.told = lost.told();
  h.taken = waiter.acquired();
  h.waiter_session_failed = other_failed;
  h.holder_log = log.text();
  if (h.told && h.taken) {
    h.told_to_taken =
        std::chrono::duration_cast<milliseconds>(waiter.acquired_at() - lost.told_at());
  }
  if (waiter.acquired()) waiting.unlock();
  return h;
}

// Runs until a run is applicable (at most kMaxRuns); every run must have had one holder at most.
Handover run(bool busy_listener) {
  Handover h;
  for (int attempt = 1; attempt <= kMaxRuns; ++attempt) {
    h = run_once(busy_listener);
    EXPECT_FALSE(h.taken && !h.told) << "two holders: the waiter acquired, the holder never told";
    EXPECT_FALSE(h.taken && h.told && h.told_to_taken.count() < 0)
        << "two holders: the waiter acquired " << -h.told_to_taken.count()
        << " ms before the holder was told Lost";
    if (!h.waiter_session_failed) return h;
    std::printf(
        "[ HANDOVER ] run %d not applicable: the waiter's healthy session went Suspended or "
        "Lost (the server did not serve it)\n",
        attempt);
  }
  ADD_FAILURE() << "no applicable run in " << kMaxRuns
                << ": the waiter's healthy session failed in each";
  return h;
}

TEST(SessionHandoverTest, TheWaiterGetsInNoEarlierThanTheMarginAfterTheHolderWasTold) {
  const Handover h = run(false);
  ASSERT_TRUE(h.told) << "the holder was never told Lost; its session's log:\n" << h.holder_log;
  ASSERT_TRUE(h.taken) << "the waiter never acquired";
  EXPECT_GE(h.told_to_taken, kMargin)
      << "the waiter acquired " << h.told_to_taken.count()
      << " ms after the holder was told Lost; the margin is " << kMargin.count() << " ms";
}

TEST(SessionHandoverTest, ABusyEventsThreadDoesNotLetTheWaiterInBeforeTheHolderIsTold) {
  const Handover h = run(true);
  ASSERT_TRUE(h.told) << "the holder was never told Lost; its session's log:\n" << h.holder_log;
  ASSERT_TRUE(h.taken) << "the waiter never acquired";
  EXPECT_GE(h.told_to_taken, kMargin)
      << "the waiter acquired " << h.told_to_taken.count()
      << " ms after the holder was told Lost (negative: before); the margin is " << kMargin.count()
      << " ms";
}

}  // namespace
}  // namespace zklock::testing
