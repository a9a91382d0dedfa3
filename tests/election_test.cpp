// Election (zklock/election.h) against a real server: one leader at a time and the next takes
// over on resign, in queue order; the term token grows; leader() names the leader and its value;
// proclaim() changes the value within the term and never writes once the term is over; leader()
// says who leads and since when; observe() delivers every change in order (value changes
// included), from a path that does not exist yet, also to a waiting reader (next_for), and leaves
// no watch behind when stopped; campaigns that give up leave no node.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "expire_session.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

// The shared server and two sessions on it: a participant's and another's (a rival, an observer).
struct TwoSessions {
  ServerRef server = shared_server();
  Session first{options_for(server.connect)};
  Session second{options_for(server.connect)};
};

ElectionOptions with_value(std::string value) {
  ElectionOptions o;
  o.value = std::move(value);
  return o;
}

// Two participants of one election (on a fresh path), each in a session of its own.
struct TwoParticipants {
  TwoParticipants(const std::string& stem, ElectionOptions first_options,
                  ElectionOptions second_options = {})
      : path(unique_path(stem)),
        first(sessions.first, path, std::move(first_options)),
        second(sessions.second, path, std::move(second_options)) {}
  TwoSessions sessions;
  std::string path;
  Election first;
  Election second;
};

// What an observation delivered, in order ("" for nobody). A leader delivered again with nothing
// changed but its stamp (`since`, written just after it took office) counts once.
class Deliveries {
 public:
  std::function<void(const LeaderChange&)> callback() {
    return [this](const LeaderChange& change) {
      std::lock_guard lock(mutex_);
      const std::string node = change.leader ? change.leader->node_path : "";
      const std::string value = change.leader ? change.leader->value : "";
      if (!values_.empty() && node == last_node_ && value == values_.back()) {
        EXPECT_FALSE(last_since_) << "delivered again, its stamp already known";
        EXPECT_TRUE(change.leader && change.leader->since) << "delivered again, unchanged";
        last_since_ = true;
        return;
      }
      last_node_ = node;
      last_since_ = change.leader && change.leader->since;
      values_.push_back(value);
      missed_.push_back(change.may_have_missed_terms);
    };
  }
  std::vector<std::string> values() const {
    std::lock_guard lock(mutex_);
    return values_;
  }
  bool wait_last(const std::string& value) const {
    return wait_until(
        [&] {
          const auto v = values();
          return !v.empty() && v.back() == value;
        },
        10s);
  }
  bool any_missed() const {
    std::lock_guard lock(mutex_);
    for (const bool m : missed_) {
      if (m) return true;
    }
    return false;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> values_;
  std::vector<bool> missed_;
  std::string last_node_;
  bool last_since_ = false;
};

TEST(ElectionTest, OneLeadsTheNextTakesOverOnResign) {
  TwoParticipants p("election", with_value("alpha"), with_value("beta"));
  Election& a = p.first;
  Election& b = p.second;
  Session& s1 = p.sessions.first;
  EXPECT_FALSE(a.leader().has_value());  // the path does not exist yet

  a.campaign();
  EXPECT_TRUE(a.is_leader());
  EXPECT_EQ(a.state(), LockState::kHeld);
  auto now = b.leader();
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(now->value, "alpha");
  EXPECT_EQ(now->node_path, a.leadership()->node_path);
  EXPECT_EQ(now->session_id, s1.session_id());
  EXPECT_EQ(now->term, a.term());

  EXPECT_FALSE(b.try_campaign_for(200ms));  // a leads
  auto taking_over = b.campaign_future();
  EXPECT_EQ(taking_over.wait_for(300ms), std::future_status::timeout);
  const FencingToken first_term = a.term();
  a.resign();
  EXPECT_FALSE(a.is_leader());
  ASSERT_EQ(taking_over.wait_for(10s), std::future_status::ready);
  Hold leadership = taking_over.get();
  ASSERT_TRUE(leadership.owns_lock());
  EXPECT_GT(leadership.fencing_token(), first_term);
  now = a.leader();
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(now->value, "beta");
  EXPECT_EQ(now->term, leadership.fencing_token());

  // unlock() sends the delete without waiting for it; another session's read may come first.
  leadership.unlock();
  EXPECT_TRUE(wait_until([&] { return !a.leader().has_value(); }, 10s)) << "nobody should lead";
  EXPECT_THROW((void)a.term(), Error);
}

TEST(ElectionTest, LatchNamedAndLockNamedParticipantsShareOneQueue) {
  ElectionOptions latch = with_value("latch-named");
  latch.curator_latch_names = true;
  TwoParticipants p("latch-names", latch, with_value("lock-named"));
  p.first.campaign();
  EXPECT_NE(p.first.leadership()->node_path.find("-latch-"), std::string::npos);
  // Nothing writes to a latch-named node (a LeaderLatch behind it waits for its deletion only,
  // and a write would use up its watch): no stamp, no proclaim.
  EXPECT_THROW(p.first.proclaim("changed"), InvalidArgumentError);
  EXPECT_EQ(p.second.leader()->value, "latch-named");
  EXPECT_FALSE(p.second.leader()->since.has_value());
  auto next = p.second.campaign_future();
  EXPECT_EQ(next.wait_for(300ms), std::future_status::timeout);  // it queues behind the latch
  EXPECT_EQ(p.second.leader()->value, "latch-named");
  p.first.resign();
  Hold leadership = next.get();
  EXPECT_NE(leadership.acquisition().node_path.find("-lock-"), std::string::npos);
  EXPECT_EQ(p.first.leader()->value, "lock-named");
}

TEST(ElectionTest, ProclaimChangesTheValueWithinTheTerm) {
  auto server = shared_server();
  Session s(options_for(server.connect));
  const std::string path = unique_path("proclaim");
  Election e(s, path, with_value("v1 \"quoted\"\n\u00e9"));
  EXPECT_THROW(e.proclaim("too early"), LockLostError);
  e.campaign();
  EXPECT_EQ(e.leader()->value, "v1 \"quoted\"\n\u00e9");
  const FencingToken term = e.term();
  e.proclaim("v2");
  EXPECT_EQ(e.leader()->value, "v2");
  EXPECT_EQ(e.term(), term);  // the same term
  EXPECT_TRUE(e.is_leader());

  // A leadership taken asynchronously proclaims through its Hold.
  Election other(s, unique_path("proclaim-hold"), with_value("h1"));
  Hold hold = other.campaign_future().get();
  other.proclaim(hold, "h2");
  EXPECT_EQ(other.leader()->value, "h2");
  hold.unlock();
  EXPECT_THROW(other.proclaim(hold, "h3"), LockLostError);
  EXPECT_FALSE(other.leader().has_value());
}

TEST(ElectionTest, ALeaderWhoseSessionEndedCannotProclaim) {
  if (using_external_server()) GTEST_SKIP() << "expires a session with its password";
  TwoParticipants p("proclaim-lost", with_value("old"));
  Election& e = p.first;
  Election& w = p.second;
  e.campaign();
  ASSERT_TRUE(expire_on_server(p.sessions.first, p.sessions.server.connect));
  ASSERT_TRUE(e.wait_lost_for(10s));
  EXPECT_THROW(e.proclaim("new"), LockLostError);
  EXPECT_FALSE(w.leader().has_value());  // its node went with the session, nothing was written
}

TEST(ElectionTest, ObserveDeliversEveryChangeInOrder) {
  auto server = shared_server();
  Session s1(options_for(server.connect));
  Session s2(options_for(server.connect));
  Session observer(options_for(server.connect));
  const std::string path = unique_path("observe");
  Election a(s1, path, with_value("alpha"));
  Election b(s2, path, with_value("beta"));
  Election o(observer, path);
  Deliveries seen;
  auto observation = o.observe(seen.callback());
  ASSERT_TRUE(wait_until([&] { return seen.values().size() == 1; }, 10s));
  EXPECT_EQ(seen.values(), std::vector<std::string>{""});  // nobody, the path is not there

  a.campaign();  // creates the path: seen once the observation looks again
  ASSERT_TRUE(seen.wait_last("alpha"));
  auto b_leads = b.campaign_future();
  a.proclaim("alpha-2");
  ASSERT_TRUE(seen.wait_last("alpha-2"));
  a.resign();
  ASSERT_TRUE(seen.wait_last("beta"));
  Hold hold = b_leads.get();
  hold.unlock();
  ASSERT_TRUE(seen.wait_last(""));
  EXPECT_EQ(seen.values(), (std::vector<std::string>{"", "alpha", "alpha-2", "beta", ""}));
  EXPECT_FALSE(seen.any_missed());
  EXPECT_TRUE(observation.active());
}

TEST(ElectionTest, AStoppedObservationDeliversNothingAndLeavesNoWatch) {
  TwoParticipants p("observe-stop", with_value("alpha"));
  Election& a = p.first;
  Election& o = p.second;
  Session& observer = p.sessions.second;
  a.campaign();
  const auto watches_before = observer.metrics().watches;
  Deliveries seen;
  auto observation = o.observe(seen.callback());
  ASSERT_TRUE(seen.wait_last("alpha"));
  EXPECT_EQ(observer.metrics().watches, watches_before + 2);  // the children and the leader
  observation.stop();
  EXPECT_FALSE(observation.active());
  EXPECT_TRUE(wait_until([&] { return observer.metrics().watches == watches_before; }, 5s));
  a.resign();
  a.campaign();
  a.proclaim("after the stop");
  // A second observation on the same session sees the last change: the stopped one, had it still
  // been watching, would have seen it by then too (its deliveries share the event thread).
  Deliveries later;
  auto second = o.observe(later.callback());
  ASSERT_TRUE(later.wait_last("after the stop"));
  EXPECT_EQ(seen.values(), std::vector<std::string>{"alpha"});
}

TEST(ElectionTest, AnObservationFollowsItsSessionIntoTheNext) {
  if (using_external_server()) GTEST_SKIP() << "expires a session with its password";
  TwoParticipants p("observe-expiry", with_value("alpha"));
  Election& a = p.first;
  Election& o = p.second;
  Session& observer = p.sessions.second;
  a.campaign();
  Deliveries seen;
  auto observation = o.observe(seen.callback());
  ASSERT_TRUE(seen.wait_last("alpha"));
  // The observer's session ends: its watches go with it. The next session watches again.
  ASSERT_TRUE(expire_on_server(observer, p.sessions.server.connect));
  ASSERT_TRUE(observer.wait_connected(10s));
  a.proclaim("alpha-2");
  EXPECT_TRUE(seen.wait_last("alpha-2"));
}

TEST(ElectionTest, ARevocableLeaderHearsARequestAndDecides) {
  TwoSessions sessions;
  Session& s = sessions.first;
  Session& other = sessions.second;
  std::atomic<int> requests{0};
  ElectionOptions o = with_value("alpha");
  o.on_revocation_requested = [&](const Acquisition&) { ++requests; };
  Election e(s, unique_path("revoke-leader"), o);
  e.campaign();
  EXPECT_EQ(request_revocation(other, e.leadership()->node_path), RevocationRequest::kAsked);
  ASSERT_TRUE(wait_until([&] { return requests.load() == 1; }, 10s));
  EXPECT_TRUE(e.is_leader());  // the request itself releases nothing
  e.resign();
}

// leader() says who leads - host and pid from its node - and, once the leader has stamped its
// node, since when (by its clock: between the campaign's start and its return, here).
TEST(ElectionTest, LeaderSaysWhoLeadsAndSinceWhen) {
  TwoParticipants p("leader-since", with_value("alpha"));
  const auto before = std::chrono::system_clock::now();
  p.first.campaign();
  const auto after = std::chrono::system_clock::now();
  std::optional<Leader> now;
  ASSERT_TRUE(wait_until(
      [&] {
        now = p.second.leader();
        return now && now->since;
      },
      10s));
  EXPECT_EQ(now->value, "alpha");
  EXPECT_EQ(now->pid, static_cast<std::int64_t>(getpid()));
  EXPECT_FALSE(now->host.empty());
  EXPECT_GE(*now->since, std::chrono::time_point_cast<std::chrono::milliseconds>(before));
  EXPECT_LE(*now->since, after);
  // A proclaimed value keeps the stamp.
  p.first.proclaim("alpha-2");
  const auto proclaimed = p.second.leader();
  ASSERT_TRUE(proclaimed);
  EXPECT_EQ(proclaimed->value, "alpha-2");
  EXPECT_EQ(proclaimed->since, now->since);
}

// The blocking form of observe(): next_for() hands out the changes in order, none skipped.
TEST(ElectionTest, ObserveWithoutACallbackWaitsForEachChange) {
  TwoParticipants p("observe-wait", with_value("alpha"));
  LeaderObservation observation = p.second.observe();
  auto next_value = [&]() -> std::optional<std::string> {
    auto change = observation.next_for(10s);
    if (!change) return std::nullopt;
    // A leader delivered again once it stamped its node: the same node and value.
    if (change->leader && change->leader->value == "alpha" && !change->leader->since) {
      auto again = observation.next_for(10s);
      if (again && again->leader && again->leader->node_path == change->leader->node_path &&
          again->leader->since) {
        return again->leader->value;
      }
      return change->leader->value + (again ? " then another" : " then none");
    }
    return change->leader ? change->leader->value : "";
  };
  EXPECT_EQ(next_value(), "");  // nobody: the path is not there yet
  EXPECT_FALSE(observation.next_for(100ms)) << "a change with nothing changed";
  p.first.campaign();
  EXPECT_EQ(next_value(), "alpha");
  p.first.proclaim("alpha-2");
  EXPECT_EQ(next_value(), "alpha-2");
  p.first.resign();
  EXPECT_EQ(next_value(), "");
  observation.stop();
  EXPECT_FALSE(observation.next_for(10ms)) << "nothing after the stop";
  // An observation with a callback has no queue to wait on.
  LeaderObservation with_callback = p.second.observe([](const LeaderChange&) {});
  EXPECT_THROW((void)with_callback.next_for(10ms), InvalidArgumentError);
}

// A campaign that gives up - a deadline, an asynchronous deadline, a cancel - leaves no node.
TEST(ElectionTest, CampaignsThatGiveUpLeaveNoNode) {
  TwoParticipants p("campaign-give-up", with_value("alpha"), with_value("beta"));
  Session& observer = p.sessions.second;
  p.first.campaign();
  EXPECT_FALSE(p.second.try_campaign_for(300ms));
  EXPECT_EQ(lock_children(observer, p.path).size(), 1u) << "a timed-out campaign left its node";

  std::promise<std::error_code> timed_out;
  LockRequest request =
      p.second.async_campaign([&](std::error_code error, Hold) { timed_out.set_value(error); },
                              AsyncLockOptions::within(300ms));
  auto outcome = timed_out.get_future();
  ASSERT_EQ(outcome.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(outcome.get(), make_error_code(Errc::timed_out));
  EXPECT_TRUE(wait_until([&] { return lock_children(observer, p.path).size() == 1u; }, 10s))
      << "an asynchronous campaign past its deadline left its node";

  std::promise<std::error_code> cancelled;
  LockRequest cancelled_request =
      p.second.async_campaign([&](std::error_code error, Hold) { cancelled.set_value(error); });
  ASSERT_TRUE(wait_until([&] { return lock_children(observer, p.path).size() == 2u; }, 10s));
  cancelled_request.cancel();
  auto cancel_outcome = cancelled.get_future();
  ASSERT_EQ(cancel_outcome.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(cancel_outcome.get(), make_error_code(Errc::cancelled));
  EXPECT_TRUE(wait_until([&] { return lock_children(observer, p.path).size() == 1u; }, 10s))
      << "a cancelled campaign left its node";
  p.first.resign();
  EXPECT_TRUE(wait_until([&] { return lock_children(observer, p.path).empty(); }, 10s));
}

// ElectionOptions::on_state_change hears the leadership begin (Held) and end with its session
// (Lost).
TEST(ElectionTest, OnStateChangeHearsTheTermBeginAndItsLoss) {
  if (using_external_server()) GTEST_SKIP() << "expires a session with its password";
  std::mutex mutex;
  std::vector<LockState> states;
  ElectionOptions leader_options = with_value("alpha");
  leader_options.on_state_change = [&](LockState state, const Acquisition&) {
    std::lock_guard lock(mutex);
    states.push_back(state);
  };
  TwoParticipants p("election-states", leader_options, with_value("beta"));
  p.first.campaign();
  auto next = p.second.campaign_future();
  ASSERT_TRUE(expire_on_server(p.sessions.first, p.sessions.server.connect));
  ASSERT_TRUE(p.first.wait_lost_for(10s));
  ASSERT_EQ(next.wait_for(10s), std::future_status::ready);
  Hold leadership = next.get();
  EXPECT_TRUE(wait_until(
      [&] {
        std::lock_guard lock(mutex);
        return states.size() >= 2;
      },
      10s));
  // Held, then Lost, last - in between, Suspended and Held again as the connection drops and
  // comes back before the expiry is known.
  std::lock_guard lock(mutex);
  ASSERT_GE(states.size(), 2u);
  EXPECT_EQ(states.front(), LockState::kHeld);
  EXPECT_EQ(states.back(), LockState::kLost);
  for (std::size_t i = 1; i + 1 < states.size(); ++i) {
    EXPECT_TRUE(states[i] == LockState::kSuspended || states[i] == LockState::kHeld)
        << "state " << i << ": " << to_string(states[i]);
  }
}

TEST(ElectionTest, ObserveRefusesAnEmptyCallback) {
  auto server = shared_server();
  Session s(options_for(server.connect));
  Election e(s, unique_path("observe-empty"));
  EXPECT_THROW((void)e.observe({}), InvalidArgumentError);
}

}  // namespace
}  // namespace zklock::testing
