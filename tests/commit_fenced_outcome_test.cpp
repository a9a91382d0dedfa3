// Mutex::commit_fenced tells "nothing was written" from "the outcome is unknown": LockLostError
// only when the multi never left this process; an error of the "outcome unknown" kind when it was
// handed to the client and its answer never came - whatever ended the wait.

#include "scripted_hook.h"
#include "test_env.h"
#include "zklock/testing/fault_hook.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

// Issue 12, item 1: the server stops answering right after our multi was sent, until our session
// is Lost by the clock. The multi may still be applied (it waits in the server's socket), so the
// caller must not be told that nothing was written. A wide margin makes the clock's Lost come
// before the C client's own disconnect (2/3 T without traffic), which would fail the multi with a
// connection loss first: Lost at (last answered send) + T - m = + 1.6 s, disconnect at + 2 s.
TEST(CommitFencedOutcomeTest, AMultiInFlightWhenTheSessionIsLostHasAnUnknownOutcome) {
  if (using_external_server()) GTEST_SKIP() << "freezes its own server";
  auto server = ZkServer::start({200, 1000, 60000, false, {}});
  SessionOptions o = options_for(server->connect_string(), 3000ms);
  o.lost_margin = 1400ms;
  // The first multi goes out, and the server freezes behind it.
  auto scripted =
      one_shot_session(o, [&](Operation op, std::string_view) -> std::optional<FaultDecision> {
        if (op != Operation::kMulti) return std::nullopt;
        server->freeze();
        return FaultDecision::pass();
      });
  Session& s = *scripted.session;
  const std::string path = "/fenced-outcome/lock";
  s.create("/fenced-outcome/counter", "0", CreateMode::kPersistent, true);
  Mutex m(s, path);
  m.lock();
  FencedWrite w;
  w.set("/fenced-outcome/counter", "1");
  try {
    m.commit_fenced(w);
    ADD_FAILURE() << "commit_fenced returned although the server never answered";
  } catch (const LockLostError& e) {
    ADD_FAILURE() << "LockLostError (\"nothing written\") for a multi that was sent: " << e.what();
  } catch (const ConnectionLossError& e) {
    EXPECT_TRUE(outcome_unknown(e.errc())) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected error: " << e.what();
  }
  ASSERT_TRUE(scripted.hook->fired());
  server->thaw();
  m.unlock();
}

// The other half: once the clock says Lost, nothing is sent, and that is LockLostError.
TEST(CommitFencedOutcomeTest, AMultiRefusedBeforeSendingIsLockLost) {
  if (using_external_server()) GTEST_SKIP() << "freezes its own server";
  auto server = ZkServer::start({200, 1000, 60000, false, {}});
  auto scripted = scripted_session(options_for(server->connect_string(), 2000ms), nullptr);
  Session& s = *scripted.session;
  s.create("/fenced-refused/counter", "0", CreateMode::kPersistent, true);
  Mutex m(s, "/fenced-refused/lock");
  m.lock();
  server->freeze();
  ASSERT_TRUE(wait_until([&] { return m.state() == LockState::kLost; }, 10s));
  FencedWrite w;
  w.set("/fenced-refused/counter", "1");
  EXPECT_THROW(m.commit_fenced(w), LockLostError);
  EXPECT_EQ(scripted.hook->count(Operation::kMulti), 0)
      << "a multi was sent after the session was Lost";
  server->thaw();
  m.unlock();
}

}  // namespace
}  // namespace zklock::testing
