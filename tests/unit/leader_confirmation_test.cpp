// LeaderConfirmation without a server: which answered requests prove that the ZooKeeper leader has
// counted our session alive, and from when.
#include "leader_confirmation.h"

#include <gtest/gtest.h>

namespace zklock::detail {
namespace {

using namespace std::chrono_literals;
using TimePoint = BootClock::time_point;

constexpr TimePoint kT0{std::chrono::hours(500)};

TEST(LeaderConfirmationTest, ADirectServerConfirmsEveryAnswerAtItsSendTime) {
  LeaderConfirmation c;
  c.set_route(true, 0ms);
  EXPECT_FALSE(c.confirmed());
  EXPECT_EQ(c.on_answered(1, kT0 + 10ms, false), kT0 + 10ms);
  EXPECT_EQ(c.on_answered(1, kT0 + 20ms, true), kT0 + 20ms);
  // Never backwards.
  EXPECT_FALSE(c.on_answered(1, kT0 + 15ms, false));
  EXPECT_EQ(c.confirmed(), kT0 + 20ms);
}

TEST(LeaderConfirmationTest, ThroughAFollowerReadsConfirmNothing) {
  LeaderConfirmation c;
  c.set_route(false, 1000ms);  // tickTime 2 s
  for (int i = 0; i < 50; ++i) EXPECT_FALSE(c.on_answered(1, kT0 + i * 100ms, false));
  EXPECT_FALSE(c.confirmed());
}

TEST(LeaderConfirmationTest, ASyncConfirmsTheLatestAnswerAtLeastTheLagOlder) {
  LeaderConfirmation c;
  c.set_route(false, 1000ms);
  c.on_answered(1, kT0, false);
  c.on_answered(1, kT0 + 400ms, false);
  c.on_answered(1, kT0 + 800ms, false);
  // A sync sent 1.5 s in: the follower's ping answers up to 0.5 s in have reached the leader.
  EXPECT_EQ(c.on_answered(1, kT0 + 1500ms, true), kT0 + 400ms);
  // One sent 1.8 s in: up to 0.8 s.
  EXPECT_EQ(c.on_answered(1, kT0 + 1800ms, true), kT0 + 800ms);
  // A sync alone confirms nothing about itself; the next one, a lag later, confirms it.
  EXPECT_EQ(c.on_answered(1, kT0 + 2800ms, true), kT0 + 1800ms);
}

TEST(LeaderConfirmationTest, NothingOlderThanTheLagMeansNoConfirmation) {
  LeaderConfirmation c;
  c.set_route(false, 1000ms);
  EXPECT_FALSE(c.on_answered(1, kT0, true));
  EXPECT_FALSE(c.on_answered(1, kT0 + 999ms, true));
  EXPECT_EQ(c.on_answered(1, kT0 + 1000ms, true), kT0);
}

TEST(LeaderConfirmationTest, AnswersOfAnEarlierConnectionDoNotCount) {
  LeaderConfirmation c;
  c.set_route(false, 1000ms);
  c.on_answered(1, kT0, false);
  c.on_answered(1, kT0 + 300ms, false);
  // Reconnected (to another server, perhaps): what the old one received may never reach the leader.
  EXPECT_FALSE(c.on_answered(2, kT0 + 1500ms, true));
  EXPECT_FALSE(c.confirmed());
  EXPECT_EQ(c.on_answered(2, kT0 + 2500ms, true), kT0 + 1500ms);
}

TEST(LeaderConfirmationTest, ACandidateIsNeverLaterThanARealSend) {
  LeaderConfirmation c;
  c.set_route(false, 100ms);
  // Many answers within one 10 ms bucket: the earliest is kept.
  for (int i = 0; i < 9; ++i) c.on_answered(1, kT0 + std::chrono::milliseconds(i), false);
  const auto confirmed = c.on_answered(1, kT0 + 108ms, true);
  ASSERT_TRUE(confirmed);
  EXPECT_LE(*confirmed, kT0 + 8ms);
  EXPECT_GE(*confirmed, kT0);
}

TEST(LeaderConfirmationTest, ACountedSignOfLifeAdvancesAndResetForgets) {
  LeaderConfirmation c;
  c.set_route(false, 1000ms);
  EXPECT_EQ(c.on_counted(kT0 + 5s), kT0 + 5s);  // a session created by a request sent then
  EXPECT_FALSE(c.on_counted(kT0 + 4s));
  c.reset();
  EXPECT_FALSE(c.confirmed());
  EXPECT_FALSE(c.direct());  // the route stays: it belongs to the ensemble, not to a session
  EXPECT_EQ(c.lag(), 1000ms);
}

TEST(LeaderConfirmationTest, HistoryStaysBoundedOnABusySession) {
  LeaderConfirmation c;
  c.set_route(false, 1000ms);
  TimePoint t = kT0;
  for (int i = 0; i < 200000; ++i) {
    t += 1ms;
    c.on_answered(1, t, i % 100 == 0);
  }
  ASSERT_TRUE(c.confirmed());
  EXPECT_GE(*c.confirmed(), t - 1100ms);  // the lag, the last sync's age, a bucket
}

}  // namespace
}  // namespace zklock::detail
