// ClientLogFilter without a server: which of the C client's lines a Session shows, at which level,
// and how alike lines are held back.
#include "client/client_log_filter.h"

#include <gtest/gtest.h>

namespace zklock::detail {
namespace {

using namespace std::chrono_literals;
using Clock = ClientLogFilter::Clock;

// Lines as the 3.8 C client writes them.
const std::string kConnectFailed =
    "2026-11-30 23:51:45,247:10480(0x7f3650ff96c0):ZOO_ERROR@check_events@3011: Socket "
    "127.0.0.1:52853 zk retcode=-4, errno=112(Host is down): failed while receiving a server "
    "response";
const std::string kConnectFailedOtherPort =
    "2026-11-30 23:51:46,301:10480(0x7f3650ff96c0):ZOO_ERROR@check_events@3011: Socket "
    "127.0.0.1:40011 zk retcode=-4, errno=112(Host is down): failed while receiving a server "
    "response";
const std::string kDelaying =
    "2026-11-30 23:51:45,319:10480(0x7f3650ff96c0):ZOO_WARN@zookeeper_interest@2561: Delaying "
    "connection after exhaustively trying all servers [127.0.0.1:59831]";
const std::string kAuthFailed =
    "2026-11-30 23:51:45,319:10480(0x7f3650ff96c0):ZOO_ERROR@auth_completion_func@1880: "
    "Authentication scheme digest failed. Connection closed.";
const std::string kEstablished =
    "2026-11-30 23:51:45,319:10480(0x7f3650ff96c0):ZOO_INFO@finalize_session_establishment@2866: "
    "session establishment complete on server 127.0.0.1:2181, sessionId=0x10000bb6ed90017";

TEST(ClientLogFilterTest, LevelsAreReadFromTheLine) {
  EXPECT_EQ(ClientLogFilter::level_written_in(kConnectFailed), LogLevel::kError);
  EXPECT_EQ(ClientLogFilter::level_written_in(kDelaying), LogLevel::kWarn);
  EXPECT_EQ(ClientLogFilter::level_written_in(kEstablished), LogLevel::kInfo);
  EXPECT_EQ(ClientLogFilter::level_written_in("no level at all"), LogLevel::kInfo);
}

TEST(ClientLogFilterTest, RoutineConnectionLinesAreHiddenAtTheDefaultLevel) {
  ClientLogFilter f;
  const auto t = Clock::now();
  EXPECT_FALSE(f.filter(kConnectFailed, LogLevel::kWarn, t).show);
  EXPECT_FALSE(f.filter(kDelaying, LogLevel::kWarn, t).show);
  EXPECT_FALSE(f.filter(kEstablished, LogLevel::kWarn, t).show);
  // Lines that are not routine keep their level.
  const auto auth = f.filter(kAuthFailed, LogLevel::kWarn, t);
  EXPECT_TRUE(auth.show);
  EXPECT_EQ(auth.level, LogLevel::kError);
  EXPECT_TRUE(ClientLogFilter().filter(kAuthFailed, LogLevel::kError, t).show);
}

TEST(ClientLogFilterTest, AtInfoRoutineLinesShowAsInfo) {
  ClientLogFilter f;
  const auto v = f.filter(kConnectFailed, LogLevel::kInfo, Clock::now());
  EXPECT_TRUE(v.show);
  EXPECT_EQ(v.level, LogLevel::kInfo);
  EXPECT_EQ(v.text, kConnectFailed);
}

TEST(ClientLogFilterTest, AlikeLinesAreHeldBackAndCounted) {
  ClientLogFilter f;
  const auto t0 = Clock::now();
  EXPECT_TRUE(f.filter(kConnectFailed, LogLevel::kInfo, t0).show);
  // Thirty a second for five seconds (what an unreachable server produced): all held back.
  for (int i = 1; i <= 150; ++i) {
    const auto& line = i % 2 ? kConnectFailedOtherPort : kConnectFailed;
    EXPECT_FALSE(f.filter(line, LogLevel::kInfo, t0 + i * 33ms).show) << i;
  }
  const auto later = f.filter(kConnectFailed, LogLevel::kInfo, t0 + ClientLogFilter::kWindow);
  EXPECT_TRUE(later.show);
  EXPECT_EQ(later.text, kConnectFailed + " (and 150 more like it)");
  // A different line is not held back by the first.
  EXPECT_TRUE(f.filter(kDelaying, LogLevel::kInfo, t0 + 1s).show);
}

TEST(ClientLogFilterTest, DebugShowsEverythingUnchanged) {
  ClientLogFilter f;
  const auto t = Clock::now();
  for (int i = 0; i < 5; ++i) {
    const auto v = f.filter(kConnectFailed, LogLevel::kDebug, t);
    EXPECT_TRUE(v.show);
    EXPECT_EQ(v.level, LogLevel::kError);
    EXPECT_EQ(v.text, kConnectFailed);
  }
}

TEST(ClientLogFilterTest, ShapeIgnoresNumbersAndThePrefix) {
  EXPECT_EQ(ClientLogFilter::shape_of(kConnectFailed),
            ClientLogFilter::shape_of(kConnectFailedOtherPort));
  EXPECT_NE(ClientLogFilter::shape_of(kConnectFailed), ClientLogFilter::shape_of(kDelaying));
  EXPECT_EQ(ClientLogFilter::shape_of("x 0x7fab12 y 42"), "x # y #");
}

}  // namespace
}  // namespace zklock::detail
