// LivenessRule without a server: the Lost / Suspended decisions, the heartbeat and reconnect
// schedule, the settings fitted to the negotiated timeout, and the blip arithmetic of
// docs/sessions.md, on an injected clock.
#include "session/liveness_rule.h"

#include <gtest/gtest.h>

namespace zklock::detail {
namespace {

using namespace std::chrono_literals;
using TimePoint = BootClock::time_point;

constexpr TimePoint kStart{std::chrono::hours(1000)};

LivenessSettings settings_for(std::chrono::milliseconds t) {
  return LivenessSettings::fitted(SessionOptions{}, t);
}

// A connected session whose latest heartbeat was sent and confirmed at `confirmed`.
LivenessInputs healthy(TimePoint now, TimePoint confirmed) {
  LivenessInputs in;
  in.now = now;
  in.confirmed = confirmed;
  in.phase = LinkPhase::kConnected;
  in.phase_since = kStart;
  in.last_heartbeat = confirmed;
  return in;
}

// The inputs once the link went to `phase` (reconnecting, or a handshake under way) at
// kStart + 1 s, the session having been confirmed at kStart.
LivenessInputs link_left_connected(LinkPhase phase) {
  auto in = healthy(kStart + 1s, kStart);
  in.phase = phase;
  in.phase_since = kStart + 1s;
  return in;
}

// The rule of one session with T = 6 s, as most tests have it: settings_for(6s) (i = 300 ms,
// m = 300 ms, suspend_after = 2 s, r = 150 ms) and a LivenessRule that remembers its decisions.
struct SixSecondRule {
  LivenessDecision evaluate(const LivenessInputs& in, SessionState current) {
    return rule.evaluate(settings, in, current);
  }
  const LivenessSettings settings = settings_for(6s);
  LivenessRule rule;
};

// The state a new rule decides on `in` for a session that is `current` now: the first evaluation,
// for the tests of a single decision.
SessionState first_decision(const LivenessInputs& in, SessionState current) {
  return SixSecondRule().evaluate(in, current).state;
}

TEST(LivenessSettingsTest, DefaultsFollowTheNegotiatedTimeout) {
  const auto s = settings_for(6s);
  EXPECT_EQ(s.session_timeout, 6s);
  EXPECT_EQ(s.heartbeat_interval, 300ms);  // T/20
  EXPECT_EQ(s.lost_margin, 300ms);
  EXPECT_EQ(s.suspend_after, 2s);
  EXPECT_EQ(s.reconnect_interval, 150ms);
  const auto small = settings_for(1s);
  EXPECT_EQ(small.lost_margin, 50ms);          // max(T/20, 50 ms)
  EXPECT_EQ(small.reconnect_interval, 125ms);  // at most T/8
}

TEST(LivenessSettingsTest, OptionsThatDoNotFitTheGrantedTimeoutAreReplaced) {
  SessionOptions o;
  o.session_timeout = 60s;
  o.heartbeat_interval = 25s;  // fine for 60 s, not for the 20 s the server grants
  o.lost_margin = 1s;
  o.suspend_after = 30s;
  bool fitted_down = false;
  const auto s = LivenessSettings::fitted(o, 20s, &fitted_down);
  EXPECT_TRUE(fitted_down);
  EXPECT_EQ(s.heartbeat_interval, 1s);  // T/20
  EXPECT_EQ(s.lost_margin, 1s);         // fits: kept
  EXPECT_EQ(s.suspend_after, std::chrono::nanoseconds(20s) / 3);
  bool again = true;
  const auto kept = LivenessSettings::fitted(o, 60s, &again);
  EXPECT_FALSE(again);
  EXPECT_EQ(kept.heartbeat_interval, 25s);
}

TEST(LivenessRuleTest, LostExactlyAtTheConfirmedSendTimePlusTMinusM) {
  SixSecondRule rule;
  const TimePoint confirmed = kStart;
  const TimePoint deadline = confirmed + 6s - 300ms;
  EXPECT_EQ(LivenessRule::lost_deadline(rule.settings, confirmed), deadline);
  auto in = healthy(deadline - 1ns, confirmed);
  in.heartbeat_pending = confirmed + 1s;  // unanswered for suspend_after (2 s) by now
  in.now = confirmed + 3s;
  EXPECT_EQ(rule.evaluate(in, SessionState::kConnected).state, SessionState::kSuspended);
  in.now = deadline - 1ns;
  EXPECT_EQ(rule.evaluate(in, SessionState::kSuspended).state, SessionState::kSuspended);
  in.now = deadline;
  EXPECT_EQ(rule.evaluate(in, SessionState::kSuspended).state, SessionState::kLost);
}

TEST(LivenessRuleTest, NothingConfirmedMeansNoDeadlineYet) {
  SixSecondRule rule;
  EXPECT_EQ(LivenessRule::lost_deadline(rule.settings, std::nullopt), TimePoint::max());
  LivenessInputs in;
  in.now = kStart + 1h;
  in.phase = LinkPhase::kConnecting;
  EXPECT_EQ(rule.evaluate(in, SessionState::kConnecting).state, SessionState::kConnecting);
  in.server_ended_session = true;
  EXPECT_EQ(rule.evaluate(in, SessionState::kConnecting).state, SessionState::kLost);
}

TEST(LivenessRuleTest, ConnectingBecomesConnectedOnTheFirstConfirmation) {
  const auto in = healthy(kStart + 10ms, kStart);
  EXPECT_EQ(first_decision(in, SessionState::kConnecting), SessionState::kConnected);
}

TEST(LivenessRuleTest, TheServerSayingExpiredIsLostAtOnce) {
  auto in = healthy(kStart + 10ms, kStart);
  in.server_ended_session = true;
  EXPECT_EQ(first_decision(in, SessionState::kConnected), SessionState::kLost);
}

TEST(LivenessRuleTest, ADisconnectSuspendsAtOnce) {
  auto in = healthy(kStart + 10ms, kStart);
  in.phase = LinkPhase::kConnecting;
  EXPECT_EQ(first_decision(in, SessionState::kConnected), SessionState::kSuspended);
}

TEST(LivenessRuleTest, AnUnansweredHeartbeatSuspendsAfterSuspendAfterNotBefore) {
  SixSecondRule rule;
  auto in = healthy(kStart, kStart);
  in.heartbeat_pending = kStart + 100ms;
  in.now = kStart + 100ms + 2s - 1ns;
  const auto before = rule.evaluate(in, SessionState::kConnected);
  EXPECT_EQ(before.state, SessionState::kConnected);
  EXPECT_LE(before.wake_at, kStart + 100ms + 2s) << "must wake to suspend in time";
  in.now = kStart + 100ms + 2s;
  EXPECT_EQ(rule.evaluate(in, SessionState::kConnected).state, SessionState::kSuspended);
}

TEST(LivenessRuleTest, SuspendedBecomesConnectedOnlyForAConfirmationSentAfterTheSuspension) {
  SixSecondRule rule;
  auto in = healthy(kStart + 1s, kStart);
  in.phase = LinkPhase::kConnecting;
  ASSERT_EQ(rule.evaluate(in, SessionState::kConnected).state, SessionState::kSuspended);
  in.phase = LinkPhase::kConnected;
  in.now = kStart + 2s;
  in.confirmed = kStart + 500ms;  // sent before the suspension: proves nothing about now
  EXPECT_EQ(rule.evaluate(in, SessionState::kSuspended).state, SessionState::kSuspended);
  in.confirmed = kStart + 1500ms;
  EXPECT_EQ(rule.evaluate(in, SessionState::kSuspended).state, SessionState::kConnected);
}

TEST(LivenessRuleTest, HeartbeatsFollowTheIntervalAndABusySessionNeedsNone) {
  SessionOptions o;
  o.heartbeat_interval = 600ms;
  const auto s = LivenessSettings::fitted(o, 6s);
  LivenessRule rule;
  auto in = healthy(kStart + 599ms, kStart);
  auto d = rule.evaluate(s, in, SessionState::kConnected);
  EXPECT_FALSE(d.send_heartbeat);
  EXPECT_EQ(d.wake_at, kStart + 600ms);
  in.now = kStart + 600ms;
  EXPECT_TRUE(rule.evaluate(s, in, SessionState::kConnected).send_heartbeat);
  // Other requests confirmed meanwhile: the next heartbeat is due an interval after them.
  in.confirmed = kStart + 500ms;
  d = rule.evaluate(s, in, SessionState::kConnected);
  EXPECT_FALSE(d.send_heartbeat);
  EXPECT_EQ(d.wake_at, kStart + 1100ms);
  // One at a time, only while connected, and at once when asked (after a reconnect).
  in.now = kStart + 5s;
  in.heartbeat_pending = kStart + 4s;
  EXPECT_FALSE(rule.evaluate(s, in, SessionState::kConnected).send_heartbeat);
  in.heartbeat_pending.reset();
  in.phase = LinkPhase::kConnecting;
  EXPECT_FALSE(rule.evaluate(s, in, SessionState::kSuspended).send_heartbeat);
  in.phase = LinkPhase::kConnected;
  in.now = kStart + 510ms;
  in.heartbeat_requested = true;
  EXPECT_TRUE(rule.evaluate(s, in, SessionState::kConnected).send_heartbeat);
}

TEST(LivenessRuleTest, ASilentConnectionIsReconnectedEveryReconnectInterval) {
  SixSecondRule rule;  // r = 150 ms, suspend_after = 2 s
  auto in = link_left_connected(LinkPhase::kConnecting);
  ASSERT_EQ(rule.evaluate(in, SessionState::kConnected).state, SessionState::kSuspended);
  // The C client reconnects by itself first; after r without success, we force a new connection.
  in.now = kStart + 1s + 149ms;
  auto d = rule.evaluate(in, SessionState::kSuspended);
  EXPECT_FALSE(d.force_reconnect);
  EXPECT_LE(d.wake_at, kStart + 1s + 150ms);
  in.now = kStart + 1s + 150ms;
  EXPECT_TRUE(rule.evaluate(in, SessionState::kSuspended).force_reconnect);
  // Not again before r has passed since the last one.
  in.last_reconnect = in.now;
  in.phase_since = in.now;
  in.now += 100ms;
  d = rule.evaluate(in, SessionState::kSuspended);
  EXPECT_FALSE(d.force_reconnect);
  EXPECT_LE(d.wake_at, *in.last_reconnect + 150ms);
  in.now = *in.last_reconnect + 150ms;
  EXPECT_TRUE(rule.evaluate(in, SessionState::kSuspended).force_reconnect);
}

TEST(LivenessRuleTest, AHandshakeUnderWayIsLeftAloneUntilItIsStuck) {
  SixSecondRule rule;
  auto in = link_left_connected(LinkPhase::kAssociating);
  ASSERT_EQ(rule.evaluate(in, SessionState::kConnected).state, SessionState::kSuspended);
  in.now = kStart + 1s + 1s;
  EXPECT_FALSE(rule.evaluate(in, SessionState::kSuspended).force_reconnect);
  in.now = kStart + 1s + 2s;  // suspend_after in the handshake: a follower that cannot revalidate
  EXPECT_TRUE(rule.evaluate(in, SessionState::kSuspended).force_reconnect);
}

// Over TLS the C client never gives up on a connect or a handshake by itself: before the first
// connection, one that has lasted suspend_after is cut (the C client then tries the next server);
// over plain TCP the C client's own timeout does it, and the rule leaves the first connect alone.
TEST(LivenessRuleTest, OverTlsAFirstConnectOrHandshakeIsCutAfterSuspendAfter) {
  for (LinkPhase phase : {LinkPhase::kConnecting, LinkPhase::kAssociating}) {
    SixSecondRule rule;  // suspend_after = 2 s
    LivenessInputs in;
    in.now = kStart;
    in.phase = phase;
    in.phase_since = kStart;
    in.tls = true;
    auto d = rule.evaluate(in, SessionState::kConnecting);
    EXPECT_EQ(d.state, SessionState::kConnecting);
    EXPECT_FALSE(d.force_reconnect);
    EXPECT_LE(d.wake_at, kStart + 2s);
    in.now = kStart + 2s - 1ms;
    EXPECT_FALSE(rule.evaluate(in, SessionState::kConnecting).force_reconnect);
    in.now = kStart + 2s;
    EXPECT_TRUE(rule.evaluate(in, SessionState::kConnecting).force_reconnect);
    // The next attempt gets its own suspend_after.
    in.last_reconnect = in.now;
    in.phase_since = in.now;
    in.now += 1s;
    EXPECT_FALSE(rule.evaluate(in, SessionState::kConnecting).force_reconnect);
    // Over plain TCP: never.
    in.tls = false;
    in.now = kStart + 10s;
    EXPECT_FALSE(rule.evaluate(in, SessionState::kConnecting).force_reconnect);
  }
}

TEST(LivenessRuleTest, AConnectionThatStoppedAnsweringIsReconnectedOnceTheHeartbeatIsOverdue) {
  SixSecondRule rule;
  auto in = healthy(kStart + 2s, kStart);
  in.heartbeat_pending = kStart + 600ms;
  in.now = kStart + 600ms + 2s;
  const auto d = rule.evaluate(in, SessionState::kConnected);
  EXPECT_EQ(d.state, SessionState::kSuspended);
  EXPECT_TRUE(d.force_reconnect);
  // Never while Connected.
  SixSecondRule fresh;
  auto ok = healthy(kStart + 300ms, kStart);
  EXPECT_FALSE(fresh.evaluate(ok, SessionState::kConnected).force_reconnect);
}

// docs/sessions.md: with heartbeats every i and answers within a round trip, a blip shorter than
// T - i - m - r (r: the time until the forced reconnect after the heal) keeps the session; one of
// T - m or longer after the last answered heartbeat never does. Simulated on the rule itself: the
// network drops everything in [blip_start, blip_start + d); a heartbeat sent while it is up is
// answered at once; after the heal the next forced reconnect (or the first heartbeat on a live
// connection) brings the answer.
struct BlipOutcome {
  bool survived = false;
  TimePoint lost_at{};
};

BlipOutcome simulate_blip(const LivenessSettings& s, std::chrono::milliseconds phase,
                          std::chrono::milliseconds blip) {
  LivenessRule rule;
  SessionState state = SessionState::kConnected;
  LivenessInputs in;
  in.phase = LinkPhase::kConnected;
  in.phase_since = kStart;
  in.confirmed = kStart;
  in.last_heartbeat = kStart;
  const TimePoint blip_start = kStart + 10s + phase;
  const TimePoint heal = blip_start + blip;
  const auto network_up = [&](TimePoint t) { return t < blip_start || t >= heal; };
  for (TimePoint now = kStart; now < heal + 10s; now += 1ms) {
    in.now = now;
    const auto d = rule.evaluate(s, in, state);
    state = d.state;
    if (state == SessionState::kLost) return {false, now};
    if (d.force_reconnect) {
      in.last_reconnect = now;
      in.phase = LinkPhase::kConnecting;
      in.phase_since = now;
      in.heartbeat_pending.reset();
    }
    if (in.phase == LinkPhase::kConnecting && network_up(now) && in.last_reconnect &&
        *in.last_reconnect >= heal && now > *in.last_reconnect) {
      in.phase = LinkPhase::kConnected;  // a connection forced after the heal got through
      in.phase_since = now;
      in.heartbeat_requested = true;
    }
    if (d.send_heartbeat) {
      in.last_heartbeat = now;
      in.heartbeat_requested = false;
      if (network_up(now)) {
        in.confirmed = now;  // answered at once
      } else {
        in.heartbeat_pending = now;
      }
    }
    if (in.heartbeat_pending && network_up(now) && in.phase == LinkPhase::kConnected &&
        now >= heal && *in.heartbeat_pending < blip_start) {
      in.heartbeat_pending.reset();  // an answer sent before the blip arrives late: no matter
    }
    if (now >= heal && state == SessionState::kConnected && in.confirmed && *in.confirmed >= heal) {
      return {true, {}};
    }
  }
  return {state != SessionState::kLost, {}};
}

// A slow sync with reads still answered is a slow leader, not a dead connection: Suspended at
// suspend_after (nothing can be confirmed), but the connection is dropped only at T/2 (review 3,
// item 11).
TEST(LivenessRuleTest, ASlowSyncWhileReadsAnswerDropsTheConnectionOnlyAtHalfT) {
  SixSecondRule rule;  // suspend_after 2 s
  LivenessInputs in = healthy(kStart + 1s, kStart + 1s);
  in.heartbeat_pending = kStart + 1s;
  in.heartbeat_read_answered = true;
  in.now = kStart + 3100ms;  // 2.1 s: overdue
  auto d = rule.evaluate(in, SessionState::kConnected);
  EXPECT_EQ(d.state, SessionState::kSuspended);
  EXPECT_FALSE(d.force_reconnect);
  EXPECT_LE(d.wake_at, kStart + 4s);  // looks again when T/2 is up
  in.now = kStart + 3900ms;
  EXPECT_FALSE(rule.evaluate(in, SessionState::kSuspended).force_reconnect);
  in.now = kStart + 4s;  // T/2 after the heartbeat
  EXPECT_TRUE(rule.evaluate(in, SessionState::kSuspended).force_reconnect);
  // The same without an answered read: silence, dropped at suspend_after.
  SixSecondRule silent;
  in.heartbeat_read_answered = false;
  in.now = kStart + 3100ms;
  EXPECT_TRUE(silent.evaluate(in, SessionState::kConnected).force_reconnect);
}

// After a silence too short to force a reconnect, the answers come back but a confirmation
// through an ensemble waits a relay after them; if the Lost deadline is nearer than that, one
// fresh connection is forced - its revalidation is counted at once. Not when the deadline is far,
// and once per silence.
TEST(LivenessRuleTest, AShortSilenceNearTheDeadlineForcesOneRescueReconnect) {
  const auto s = settings_for(6s);                   // i = 300 ms, m = 300 ms, suspend_after 2 s
  LivenessInputs in = healthy(kStart + 4s, kStart);  // deadline kStart + 5.7 s
  in.late_read_at = kStart + 3900ms;                 // a 1.5 s silence just ended
  in.rescue_window = 1000ms + 600ms;                 // relay 1 s + 2i
  LivenessRule rule;
  EXPECT_FALSE(rule.evaluate(s, in, SessionState::kConnected).force_reconnect);  // 1.7 s left
  in.now = kStart + 4100ms;                                                      // 1.6 s left
  EXPECT_TRUE(rule.evaluate(s, in, SessionState::kConnected).force_reconnect);
  in.last_reconnect = kStart + 4100ms;
  in.now = kStart + 4400ms;
  EXPECT_FALSE(rule.evaluate(s, in, SessionState::kConnected).force_reconnect);  // done once
  // Far from the deadline: no reconnect for a late answer.
  LivenessInputs far = healthy(kStart + 4s, kStart + 3500ms);
  far.late_read_at = kStart + 3900ms;
  far.rescue_window = 1600ms;
  LivenessRule calm;
  EXPECT_FALSE(calm.evaluate(s, far, SessionState::kConnected).force_reconnect);
  // Nor without a late answer.
  in.late_read_at.reset();
  in.last_reconnect.reset();
  LivenessRule quiet;
  EXPECT_FALSE(quiet.evaluate(s, in, SessionState::kConnected).force_reconnect);
}

TEST(LivenessRuleTest, BlipArithmeticOfTheDocs) {
  const auto s = settings_for(6s);  // i = 300 ms, m = 300 ms, r = 150 ms
  for (const auto phase : {0ms, 100ms, 200ms, 299ms}) {
    SCOPED_TRACE("blip starts " + std::to_string(phase.count()) +
                 " ms later in a heartbeat interval");
    // T - i - m - r = 5.25 s: kept, whatever the phase (0.85 T = 5.1 s among them).
    for (const auto blip : {1000ms, 3000ms, 4500ms, 5100ms, 5200ms}) {
      EXPECT_TRUE(simulate_blip(s, phase, blip).survived) << "blip " << blip.count() << " ms";
    }
    // T - m = 5.7 s after the last answered heartbeat, and more: always Lost, never late.
    for (const auto blip : {5700ms, 6000ms, 12000ms}) {
      const auto outcome = simulate_blip(s, phase, blip);
      EXPECT_FALSE(outcome.survived) << "blip " << blip.count() << " ms";
    }
  }
}

}  // namespace
}  // namespace zklock::detail
