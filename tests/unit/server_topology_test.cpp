// What /zookeeper/config says about the servers, and the confirmation lag that follows from it.
#include "server_topology.h"

#include <gtest/gtest.h>

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

TEST(ServerTopologyTest, TheLagIsHalfATickThroughFollowersAndATickWithObservers) {
  EXPECT_EQ(confirmation_lag(ServerTopology::kStandalone, 2s), 0s);
  EXPECT_EQ(confirmation_lag(ServerTopology::kEnsemble, 2s), 1s);
  EXPECT_EQ(confirmation_lag(ServerTopology::kUnknown, 2s), 1s);  // until learned: an ensemble
  EXPECT_EQ(confirmation_lag(ServerTopology::kEnsembleWithObservers, 2s), 2s);
}

}  // namespace
}  // namespace zklock::detail
