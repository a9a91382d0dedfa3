// tests/support/tests/four_letter_words_test.cpp: the four-letter-word parsers on outputs captured
// from a real server, and the client's behaviour when nobody answers; the port picker. No server
// is started here (the unit tier): the live 4lw observations are in zk_server_test.cpp.
#include "support/four_letter_words.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/zk_server.h"

namespace zklock::testing {
namespace {

using namespace std::chrono_literals;

// =============================================================================================
// Four-letter words: parsers on outputs captured from a ZooKeeper 3.8.0 standalone server, with
// one session holding the ephemeral /eph and watches on /per (getData) and /nonexist (exists).

constexpr std::string_view kCapturedWchc = "0x1000006591d0000\n\t/nonexist\n\t/per\n\n";
constexpr std::string_view kCapturedWchp =
    "/nonexist\n\t0x1000006591d0000\n/per\n\t0x1000006591d0000\n\n";
constexpr std::string_view kCapturedDump =
    "SessionTracker dump:\nSession Sets (1)/(1):\n1 expire at Mon Nov 30 00:23:33 UTC 2026:\n"
    "\t0x1000006591d0000\nephemeral nodes dump:\nSessions with Ephemerals (1):\n"
    "0x1000006591d0000:\n\t/eph\nConnections dump:\nConnections Sets (2)/(2):\n"
    "0 expire at Mon Nov 30 00:23:32 UTC 2026:\n2 expire at Mon Nov 30 00:23:42 UTC 2026:\n"
    "\tip: /127.0.0.1:45072 sessionId: 0x0\n\tip: /127.0.0.1:52738 sessionId: 0x1000006591d0000\n";
constexpr std::string_view kCapturedMntrHead =
    "zk_version\t3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC\n"
    "zk_server_state\tstandalone\nzk_ephemerals_count\t1\nzk_num_alive_connections\t2\n"
    "zk_avg_latency\t4.8\nzk_watch_count\t2\n";
constexpr std::string_view kCapturedSrvr =
    "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC\n"
    "Latency min/avg/max: 0/4.8/13\nReceived: 12\nSent: 13\nConnections: 2\nOutstanding: 0\n"
    "Zxid: 0x3\nMode: standalone\nNode count: 7\n";
constexpr int64_t kCapturedSession = 0x1000006591d0000;

TEST(FourLetterWordsTest, ParsesMntrIntoKeysAndValues) {
  const auto mntr = parse_mntr(kCapturedMntrHead);
  EXPECT_EQ(mntr.at("zk_server_state"), "standalone");
  EXPECT_EQ(mntr.at("zk_watch_count"), "2");
  EXPECT_EQ(mntr.at("zk_version"), "3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC");
  EXPECT_EQ(mntr.size(), 6u);
}

TEST(FourLetterWordsTest, ParsesTheModeOfSrvr) {
  EXPECT_EQ(parse_mode(kCapturedSrvr), "standalone");
  EXPECT_EQ(parse_mode("This ZooKeeper instance is not currently serving requests\n"), "");
}

TEST(FourLetterWordsTest, ParsesWatchesBySessionAndByPath) {
  const WatchesBySession wchc = parse_wchc(kCapturedWchc);
  ASSERT_EQ(wchc.size(), 1u);
  EXPECT_EQ(wchc.at(kCapturedSession), (std::vector<std::string>{"/nonexist", "/per"}));

  const WatchesByPath wchp = parse_wchp(kCapturedWchp);
  ASSERT_EQ(wchp.size(), 2u);
  EXPECT_EQ(wchp.at("/per"), std::vector<int64_t>{kCapturedSession});
  EXPECT_EQ(wchp.at("/nonexist"), std::vector<int64_t>{kCapturedSession});

  EXPECT_TRUE(parse_wchc("").empty());
  EXPECT_TRUE(parse_wchp("\n").empty());
}

TEST(FourLetterWordsTest, ParsesOnlyTheEphemeralsSectionOfDump) {
  // Only the ephemerals section counts, not the session-expiry or connection sections.
  const EphemeralsBySession dump = parse_dump_ephemerals(kCapturedDump);
  ASSERT_EQ(dump.size(), 1u);
  EXPECT_EQ(dump.at(kCapturedSession), std::vector<std::string>{"/eph"});
  EXPECT_TRUE(parse_dump_ephemerals("Sessions with Ephemerals (0):\nConnections dump:\n").empty());
}

TEST(FourLetterWordsTest, ParsesSessionIds) {
  EXPECT_EQ(parse_session_id("0x1000006591d0000"), kCapturedSession);
  EXPECT_EQ(parse_session_id("0x0"), 0);
  // Server ids >= 128 give negative session ids, as in the C client's clientid_t.
  EXPECT_EQ(parse_session_id("0xff00000000000001"), static_cast<int64_t>(0xff00000000000001ULL));
  EXPECT_EQ(parse_session_id("\t0xAbC"), 0xabc);
  EXPECT_FALSE(parse_session_id("1000006591d0000").has_value());
  EXPECT_FALSE(parse_session_id("0x").has_value());
  EXPECT_FALSE(parse_session_id("0x12g").has_value());
  EXPECT_FALSE(parse_session_id("0x10000000000000000").has_value());  // 17 digits
}

TEST(FourLetterWordsTest, FormatsSessionIdsAsZooKeeperPrintsThem) {
  EXPECT_EQ(format_session_id(kCapturedSession), "0x1000006591d0000");
  EXPECT_EQ(format_session_id(0), "0x0");
  EXPECT_EQ(format_session_id(static_cast<int64_t>(0xff00000000000001ULL)), "0xff00000000000001");
  EXPECT_EQ(parse_session_id(format_session_id(-2)), -2);
}

TEST(FourLetterWordsTest, UnreachableServerGivesEmptyQuickly) {
  const int port = pick_free_port();  // nothing listens there
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(try_four_letter_word(port, "ruok").has_value());
  EXPECT_EQ(four_letter_word(port, "ruok"), "");
  EXPECT_EQ(watch_count(port), -1);
  EXPECT_TRUE(watched_paths(port).empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << "connection refused must not wait";
}

TEST(PortPickingTest, PicksDistinctPortsBelowTheEphemeralRange) {
  const std::vector<int> ports = pick_free_ports(9);
  ASSERT_EQ(ports.size(), 9u);
  std::vector<int> sorted = ports;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  // Below the ephemeral range, no outgoing connection can take a port while its server is down.
  int ephemeral_low = 0;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low;
  for (int port : ports) {
    EXPECT_GT(port, 0);
    if (ephemeral_low > 12000) {
      EXPECT_LT(port, ephemeral_low);
    }
  }
}

}  // namespace
}  // namespace zklock::testing
