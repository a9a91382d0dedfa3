// tests/support/tests/zk_server_test.cpp: real ZooKeeper servers started by the tests
// (support/zk_server.h, zk_ensemble.h): start, restart, crash, freeze, the shared server, and what
// the four-letter words show of sessions, ephemerals and watches.
//
// The ZooKeeper C client is used directly (RawZkClient, not zklock) to create the sessions,
// ephemerals and watches that the server then shows.
#include "support/zk_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "support/four_letter_words.h"
#include "support/process.h"
#include "support/raw_zk_client.h"
#include "support/unique_name.h"
#include "support/wait.h"
#include "support/zk_ensemble.h"

namespace zklock::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

bool contains(const std::vector<std::string>& haystack, const std::string& needle) {
  return std::find(haystack.begin(), haystack.end(), needle) != haystack.end();
}

// A top-level znode no other test uses: tests may share a server.
std::string unique_path(const std::string& name) {
  return "/" + unique_name("zklock-harness-" + name);
}

// =============================================================================================
// Standalone server

TEST(ZkServerTest, StartsAndAnswersRuokAndMntr) {
  auto server = ZkServer::start();
  EXPECT_TRUE(server->running());
  EXPECT_TRUE(pid_alive(server->pid()));
  EXPECT_EQ(server->connect_string(), "127.0.0.1:" + std::to_string(server->port()));
  EXPECT_EQ(server->four_letter("ruok"), "imok");
  const auto mntr = parse_mntr(server->four_letter("mntr"));
  EXPECT_EQ(mntr.count("zk_version"), 1u);
  EXPECT_EQ(mntr.count("zk_server_state") ? mntr.at("zk_server_state") : "", "standalone");
  EXPECT_EQ(parse_mode(server->four_letter("srvr")), "standalone");
  EXPECT_EQ(watch_count(server->port()), 0);
  EXPECT_TRUE(fs::is_directory(server->data_dir()));
  EXPECT_NE(server->four_letter("conf").find("dataDir=" + server->data_dir()), std::string::npos);

  const std::string root = fs::path(server->data_dir()).parent_path().string();
  const pid_t pid = server->pid();
  server.reset();
  EXPECT_FALSE(pid_alive(pid));
  if (!keep_test_dirs()) {
    EXPECT_FALSE(fs::exists(root)) << "temporary directory left behind";
  }
}

TEST(ZkServerTest, RestartKeepsPortDataAndSessions) {
  auto server = ZkServer::start();
  const int port = server->port();
  const pid_t first_pid = server->pid();

  // A short session timeout: after a failed reconnect attempt the C client waits a fraction of it
  // (observed: up to ~2/3) before trying again, and the session must survive the downtime anyway.
  RawZkClient client(server->connect_string(), 6000);
  ASSERT_TRUE(client.wait_connected());
  const int64_t session = client.session_id();
  ASSERT_EQ(client.create("/persistent"), ZOK);
  ASSERT_EQ(client.create("/ephemeral", ZOO_EPHEMERAL), ZOK);

  server->restart();
  EXPECT_EQ(server->port(), port);
  EXPECT_NE(server->pid(), first_pid);
  EXPECT_FALSE(pid_alive(first_pid));
  EXPECT_EQ(server->four_letter("ruok"), "imok");

  // The client reconnects to the same port and resumes its session: its ephemeral survives.
  ASSERT_TRUE(wait_until([&] { return client.exists("/ephemeral") == ZOK; }, 20s));
  EXPECT_EQ(client.session_id(), session);
  EXPECT_EQ(client.exists("/persistent"), ZOK);
  EXPECT_TRUE(contains(ephemeral_paths(port), "/ephemeral"));

  // A crash: committed data survives SIGKILL too (forceSync=no only skips fsync).
  ASSERT_EQ(client.create("/after-restart"), ZOK);
  server->kill();
  EXPECT_FALSE(server->running());
  EXPECT_EQ(server->four_letter("ruok"), "");
  server->restart();
  EXPECT_EQ(server->port(), port);
  ASSERT_TRUE(wait_until([&] { return client.exists("/after-restart") == ZOK; }, 20s));
  EXPECT_EQ(client.session_id(), session);
}

TEST(ZkServerTest, FreezeTimesOutFourLetterWordsThawRestoresAndStopWorks) {
  auto server = ZkServer::start();
  ASSERT_EQ(server->four_letter("ruok"), "imok");

  server->freeze();
  EXPECT_TRUE(server->running());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(try_four_letter_word(server->port(), "ruok", 500ms).has_value());
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 450ms) << "a frozen server cannot have answered or refused";
  EXPECT_LT(waited, 3s) << "the 4lw timeout was not honoured";
  EXPECT_EQ(server->four_letter("ruok", 200ms), "");

  server->thaw();
  EXPECT_TRUE(wait_until([&] { return server->four_letter("ruok") == "imok"; }, 10s));

  // A frozen server still stops promptly: stop() continues it so that it can act on SIGTERM
  // (otherwise only the SIGKILL after the 10 s grace period would end it).
  server->freeze();
  const auto stop_start = std::chrono::steady_clock::now();
  server->stop();
  EXPECT_FALSE(server->running());
  EXPECT_LT(std::chrono::steady_clock::now() - stop_start, 8s);
  EXPECT_EQ(server->four_letter("ruok"), "");
}

// =============================================================================================
// Shared server and live 4lw observations (also valid against ZKLOCK_TEST_CONNECT)

TEST(SharedServerTest, IsStartedOnceAndReused) {
  const ServerRef first = shared_server();
  const ServerRef second = shared_server();
  EXPECT_EQ(first.connect, second.connect);
  EXPECT_EQ(first.port, second.port);
  EXPECT_EQ(first.owned, second.owned);
  EXPECT_EQ(first.owned == nullptr, using_external_server());
  EXPECT_EQ(four_letter_word(first.port, "ruok"), "imok");
}

TEST(SharedServerTest, WatchesAndEphemeralsAreVisibleThroughFourLetterWords) {
  const ServerRef server = shared_server();
  const std::string ephemeral = unique_path("ephemeral");
  const std::string data = unique_path("data");
  const std::string absent = unique_path("absent");

  auto client = std::make_unique<RawZkClient>(server.connect);
  ASSERT_TRUE(client->wait_connected());
  const int64_t session = client->session_id();
  ASSERT_EQ(client->create(ephemeral, ZOO_EPHEMERAL), ZOK);
  ASSERT_EQ(client->create(data), ZOK);
  std::array<char, 16> buffer{};
  int length = static_cast<int>(buffer.size());
  Stat stat{};
  ASSERT_EQ(zoo_wget(client->handle(), data.c_str(), ignore_watch_events, nullptr, buffer.data(),
                     &length, &stat),
            ZOK);
  ASSERT_EQ(zoo_wexists(client->handle(), absent.c_str(), ignore_watch_events, nullptr, &stat),
            ZNONODE);

  // On a standalone server this is immediate; polling keeps it right on an external ensemble.
  EXPECT_TRUE(wait_until(
      [&] {
        const auto wchc = parse_wchc(four_letter_word(server.port, "wchc"));
        const auto it = wchc.find(session);
        return it != wchc.end() && contains(it->second, data) && contains(it->second, absent);
      },
      5s))
      << four_letter_word(server.port, "wchc");
  const auto wchp = parse_wchp(four_letter_word(server.port, "wchp"));
  ASSERT_EQ(wchp.count(data), 1u);
  EXPECT_EQ(wchp.at(data), std::vector<int64_t>{session});
  EXPECT_TRUE(contains(watched_paths(server.port), absent));
  EXPECT_GE(watch_count(server.port), 2);

  EXPECT_TRUE(wait_until([&] { return contains(ephemeral_paths(server.port), ephemeral); }, 5s));
  const auto dump = parse_dump_ephemerals(four_letter_word(server.port, "dump"));
  ASSERT_EQ(dump.count(session), 1u);
  EXPECT_TRUE(contains(dump.at(session), ephemeral));
  EXPECT_GE(mntr_value(server.port, "zk_ephemerals_count").value_or(0), 1);

  // Closing the session removes its ephemeral and watches on the server: the helpers see it.
  ASSERT_EQ(zoo_delete(client->handle(), data.c_str(), -1), ZOK);
  client.reset();
  EXPECT_TRUE(wait_until(
      [&] {
        return !contains(ephemeral_paths(server.port), ephemeral) &&
               !contains(watched_paths(server.port), absent) &&
               parse_wchc(four_letter_word(server.port, "wchc")).count(session) == 0;
      },
      10s));
}

// =============================================================================================
// Ensemble

TEST(ZkEnsembleTest, ElectsNewLeaderAfterLeaderDiesAndSessionsSurvive) {
  auto ensemble = ZkEnsemble::start(3);
  ASSERT_EQ(ensemble->size(), 3);
  int leaders = 0;
  int followers = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string mode = ensemble->mode(i);
    leaders += mode == "leader";
    followers += mode == "follower";
    EXPECT_EQ(parse_mode(ensemble->four_letter(i, "srvr")), mode);
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_EQ(followers, 2);
  const std::string connect = ensemble->connect_string();
  EXPECT_EQ(std::count(connect.begin(), connect.end(), ','), 2);
  EXPECT_NE(connect.find(ensemble->node_connect_string(2)), std::string::npos);

  RawZkClient client(connect, 10000);
  ASSERT_TRUE(client.wait_connected());
  const int64_t session = client.session_id();
  ASSERT_EQ(client.create("/ephemeral", ZOO_EPHEMERAL), ZOK);
  ASSERT_EQ(client.create("/data", 0, "v1"), ZOK);

  const int old_leader = ensemble->kill_leader();
  EXPECT_FALSE(ensemble->running(old_leader));
  EXPECT_EQ(ensemble->four_letter(old_leader, "ruok"), "");
  const auto killed_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(ensemble->wait_for_leader(30s));
  const int new_leader = ensemble->leader_index();
  EXPECT_GE(new_leader, 0);
  EXPECT_NE(new_leader, old_leader);
  std::printf("[          ] failover took %lld ms\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - killed_at)
                                         .count()));

  // The session survives the failover: writes work again, its ephemeral is still there, and the
  // new leader's dump lists it under the same session.
  ASSERT_TRUE(
      wait_until([&] { return zoo_set(client.handle(), "/data", "v2", 2, -1) == ZOK; }, 20s, 50ms));
  EXPECT_EQ(client.session_id(), session);
  EXPECT_EQ(client.exists("/ephemeral"), ZOK);
  const auto dump = parse_dump_ephemerals(ensemble->four_letter(new_leader, "dump"));
  ASSERT_EQ(dump.count(session), 1u);
  EXPECT_TRUE(contains(dump.at(session), "/ephemeral"));

  // The old leader comes back as a follower of the new one.
  ensemble->restart(old_leader);
  EXPECT_TRUE(ensemble->running(old_leader));
  EXPECT_EQ(ensemble->mode(old_leader), "follower");
  EXPECT_EQ(ensemble->leader_index(), new_leader);

  // A frozen follower answers nothing, and comes back when thawed.
  const int follower = (new_leader + 1) % 3;
  ensemble->freeze(follower);
  EXPECT_TRUE(ensemble->running(follower));
  EXPECT_EQ(ensemble->four_letter(follower, "ruok", 300ms), "");
  EXPECT_EQ(ensemble->mode(follower), "");
  ensemble->thaw(follower);
  EXPECT_TRUE(wait_until([&] { return ensemble->four_letter(follower, "ruok") == "imok"; }, 10s));

  std::vector<pid_t> pids;
  pids.reserve(3);
  for (int i = 0; i < 3; ++i) pids.push_back(ensemble->pid(i));
  ensemble.reset();
  for (pid_t pid : pids) EXPECT_FALSE(pid_alive(pid)) << "node pid " << pid << " left running";
}

TEST(ZkEnsembleTest, RejectsBadArguments) {
  EXPECT_THROW(ZkEnsemble::start(0), std::invalid_argument);
}

}  // namespace
}  // namespace zklock::testing
