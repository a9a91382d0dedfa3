// What /zookeeper/config says about the servers, and the confirmation lag that follows from it.
#include "session/server_topology.h"

#include <gtest/gtest.h>

#include "session/tick_bound.h"

namespace zklock::detail {
namespace {

using namespace std::chrono_literals;

TEST(ServerTopologyTest, AnEmptyConfigIsAStandaloneServer) {
  EXPECT_EQ(topology_of_config(""), ServerTopology::kStandalone);
  EXPECT_EQ(topology_of_config("version=0"), ServerTopology::kStandalone);
}

TEST(ServerTopologyTest, ServerLinesAreAnEnsemble) {
  // As a 3.8 ensemble writes it (roles and client addresses after ';').
  EXPECT_EQ(topology_of_config("server.1=127.0.0.1:40001:40002:participant;127.0.0.1:40000\n"
                               "server.2=127.0.0.1:40011:40012:participant;127.0.0.1:40010\n"
                               "server.3=127.0.0.1:40021:40022:participant;127.0.0.1:40020\n"
                               "version=100000000"),
            ServerTopology::kEnsemble);
  // Without roles or client addresses (older static configs).
  EXPECT_EQ(topology_of_config("server.1=zk1:2888:3888\nserver.2=zk2:2888:3888"),
            ServerTopology::kEnsemble);
}

TEST(ServerTopologyTest, AnObserverAnywhereInTheListIsSeen) {
  EXPECT_EQ(topology_of_config("server.1=zk1:2888:3888:participant;0.0.0.0:2181\n"
                               "server.2=zk2:2888:3888:participant;0.0.0.0:2181\n"
                               "server.3=zk3:2888:3888:participant;0.0.0.0:2181\n"
                               "server.4=zk4:2888:3888:observer;0.0.0.0:2181\n"
                               "version=0"),
            ServerTopology::kEnsembleWithObservers);
  EXPECT_EQ(topology_of_config("server.4=zk4:2888:3888:observer\nserver.1=zk1:2888:3888"),
            ServerTopology::kEnsembleWithObservers);
  // A host whose name merely contains the word is no observer.
  EXPECT_EQ(topology_of_config("server.1=observer.example:2888:3888:participant;observer:2181"),
            ServerTopology::kEnsemble);
}

// A whole tick through any ensemble: half a tick of relay would do through a follower, a tick
// through an observer behind an ObserverMaster, but a stale leader answers syncs for up to a tick
// after a new one could be elected (leader_isolation_test measured 1.3 to 2.0 s at tickTime 2 s).
TEST(ServerTopologyTest, TheLagIsATickThroughAnyEnsemble) {
  EXPECT_EQ(confirmation_lag(ServerTopology::kStandalone, 2s), 0s);
  EXPECT_EQ(confirmation_lag(ServerTopology::kEnsemble, 2s), 2s);
  EXPECT_EQ(confirmation_lag(ServerTopology::kUnknown, 2s), 2s);  // until learned: an ensemble
  EXPECT_EQ(confirmation_lag(ServerTopology::kEnsembleWithObservers, 2s), 2s);
}

// tickTime: what the application says, else half the smallest timeout the ensemble granted.
TEST(ServerTopologyTest, TheTickIsBoundedByTheSmallestGrantedTimeout) {
  EXPECT_EQ(tick_bound(1500ms, 6000ms, 4000ms), 1500ms);     // told
  EXPECT_EQ(tick_bound(0ms, 6000ms, std::nullopt), 3000ms);  // only our own: T/2
  EXPECT_EQ(tick_bound(0ms, 6000ms, 4000ms), 2000ms);        // the probe's minimum
  EXPECT_EQ(tick_bound(0ms, 6000ms, 1000ms), 500ms);         // granted what it asked
  EXPECT_EQ(tick_bound(0ms, 3000ms, 4000ms), 1500ms);        // ours smaller (a lower max)
}

}  // namespace
}  // namespace zklock::detail
