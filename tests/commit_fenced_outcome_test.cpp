// Mutex::commit_fenced tells "nothing was written" from "the outcome is unknown": LockLostError
// only when the multi never left this process; an error of the "outcome unknown" kind when it was
// handed to the client and its answer never came - whatever ended the wait.
#include <atomic>

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
  auto server = ZkServer::start({200, 1000, 60000, false});
  std::atomic<bool> frozen{false};
  class FreezeOnMulti : public FaultHook {
   public:
    FreezeOnMulti(ZkServer& s, std::atomic<bool>& frozen) : server_(s), frozen_(frozen) {}
    FaultDecision on_request(Operation op, std::string_view) override {
      if (op == Operation::kMulti && !frozen_.exchange(true)) server_.freeze();
      return FaultDecision::pass();
    }

   private:
    ZkServer& server_;
    std::atomic<bool>& frozen_;
  };
  SessionOptions o = options_for(server->connect_string(), 3000ms);
  o.lost_margin = 1400ms;
  auto s_owner = open_session(o, std::make_shared<FreezeOnMulti>(*server, frozen));
  Session& s = *s_owner;
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
  ASSERT_TRUE(frozen.load());
  server->thaw();
  m.unlock();
}

// The other half: once the clock says Lost, nothing is sent, and that is LockLostError.
TEST(CommitFencedOutcomeTest, AMultiRefusedBeforeSendingIsLockLost) {
  if (using_external_server()) GTEST_SKIP() << "freezes its own server";
  auto server = ZkServer::start({200, 1000, 60000, false});
  std::atomic<int> multis{0};
  class CountMultis : public FaultHook {
   public:
    explicit CountMultis(std::atomic<int>& n) : n_(n) {}
    FaultDecision on_request(Operation op, std::string_view) override {
      if (op == Operation::kMulti) ++n_;
      return FaultDecision::pass();
    }

   private:
    std::atomic<int>& n_;
  };
  SessionOptions o = options_for(server->connect_string(), 2000ms);
  auto s_owner = open_session(o, std::make_shared<CountMultis>(multis));
  Session& s = *s_owner;
  s.create("/fenced-refused/counter", "0", CreateMode::kPersistent, true);
  Mutex m(s, "/fenced-refused/lock");
  m.lock();
  server->freeze();
  ASSERT_TRUE(wait_until([&] { return m.state() == LockState::kLost; }, 10s));
  FencedWrite w;
  w.set("/fenced-refused/counter", "1");
  EXPECT_THROW(m.commit_fenced(w), LockLostError);
  EXPECT_EQ(multis.load(), 0) << "a multi was sent after the session was Lost";
  server->thaw();
  m.unlock();
}

}  // namespace
}  // namespace zklock::testing
