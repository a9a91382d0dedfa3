// Election (zklock/election.h) against a real server: one leader at a time and the next takes
// over on resign, in queue order; the term token grows; leader() names the leader and its value;
// proclaim() changes the value within the term and never writes once the term is over; observe()
// delivers every change in order (value changes included), from a path that does not exist yet,
// and leaves no watch behind when stopped.
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

// What an observation delivered, in order ("" for nobody).
class Deliveries {
 public:
  std::function<void(const LeaderChange&)> callback() {
    return [this](const LeaderChange& change) {
      std::lock_guard lock(mutex_);
      values_.push_back(change.leader ? change.leader->value : "");
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

  leadership.unlock();
  EXPECT_FALSE(a.leader().has_value());
  EXPECT_THROW((void)a.term(), Error);
}

TEST(ElectionTest, LatchNamedAndLockNamedParticipantsShareOneQueue) {
  ElectionOptions latch = with_value("latch-named");
  latch.curator_latch_names = true;
  TwoParticipants p("latch-names", latch, with_value("lock-named"));
  p.first.campaign();
  EXPECT_NE(p.first.leadership()->node_path.find("-latch-"), std::string::npos);
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
  EXPECT_TRUE(request_revocation(other, e.leadership()->node_path));
  ASSERT_TRUE(wait_until([&] { return requests.load() == 1; }, 10s));
  EXPECT_TRUE(e.is_leader());  // the request itself releases nothing
  e.resign();
}

TEST(ElectionTest, ObserveRefusesAnEmptyCallback) {
  auto server = shared_server();
  Session s(options_for(server.connect));
  Election e(s, unique_path("observe-empty"));
  EXPECT_THROW((void)e.observe({}), InvalidArgumentError);
}

}  // namespace
}  // namespace zklock::testing
