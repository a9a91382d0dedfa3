// tests/support/tests/fault_proxy_zookeeper_test.cpp: the TCP fault proxy (support/fault_proxy.h)
// between the ZooKeeper C client and a real server: a partition the session survives, a lost
// create reply (connection loss, yet the node exists), a partition that expires the session.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/fault_proxy.h"
#include "support/raw_zk_client.h"
#include "support/unique_name.h"
#include "support/wait.h"
#include "support/zk_server.h"

namespace zklock::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kSoon = 10s;  // upper bound for anything that should happen "soon"

class FaultProxyZooKeeperTest : public ::testing::Test {
 protected:
  // The process's shared server (tests/support/zk_server.h): started on first use, or the one
  // ZKLOCK_TEST_CONNECT names.
  void SetUp() override { server_ = shared_server(); }

  // A new persistent node for one test's nodes, created directly on the server.
  static std::string new_parent(const std::string& stem) {
    const std::string path = "/" + unique_name("fault-proxy-" + stem);
    RawZkClient direct(server_.connect, 10000);
    EXPECT_TRUE(direct.wait_connected(kSoon));
    const int rc = direct.create(path);
    EXPECT_EQ(rc, ZOK) << ::zerror(rc);
    return path;
  }

  static ServerRef server_;
};

ServerRef FaultProxyZooKeeperTest::server_;

TEST_F(FaultProxyZooKeeperTest, BlackholeDisconnectsAndHealReconnectsSameSession) {
  auto proxy = FaultProxy::start("127.0.0.1", server_.port);
  const int kSessionMs = 6000;
  RawZkClient client(proxy->connect_string(), kSessionMs);
  ASSERT_TRUE(client.wait_connected(kSoon));
  const int64_t session = client.session_id();

  // Pass: a create round-trips.
  const std::string path = "/fault-proxy-pass-" + std::to_string(::getpid());
  char created[256];
  ASSERT_EQ(::zoo_create(client.handle(), path.c_str(), "v", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL,
                         created, sizeof created),
            ZOK);
  EXPECT_EQ(std::string(created), path);

  // Partition: the client notices within the session timeout ...
  proxy->blackhole();
  const auto blackholed_at = Clock::now();
  ASSERT_TRUE(client.wait_state([](int s) { return s != ZOO_CONNECTED_STATE; },
                                std::chrono::milliseconds(kSessionMs)));
  EXPECT_LT(Clock::now() - blackholed_at, std::chrono::milliseconds(kSessionMs));
  // ... and, healed in time, gets its session back. The client has most likely reconnected into
  // the partition already, its ConnectRequest lost: reset such connections so that it need not
  // wait out another receive timeout (longer than what is left of the session).
  proxy->heal(Heal::kResetDamaged);
  ASSERT_TRUE(client.wait_connected(kSoon));
  EXPECT_EQ(client.session_id(), session);
  struct Stat stat {};
  EXPECT_EQ(::zoo_exists(client.handle(), path.c_str(), 0, &stat), ZOK);
  EXPECT_EQ(stat.ephemeralOwner, session);
  EXPECT_GE(proxy->accepted(), 2u);  // it had to reconnect
}

TEST_F(FaultProxyZooKeeperTest, DroppedCreateReplyIsConnectionLossButNodeExists) {
  const std::string parent = new_parent("drop");
  auto proxy = FaultProxy::start("127.0.0.1", server_.port);
  RawZkClient client(proxy->connect_string(), 6000);
  ASSERT_TRUE(client.wait_connected(kSoon));
  const int64_t session = client.session_id();

  proxy->drop_next_reply_containing("-lock-");
  const std::string prefix = parent + "/x-lock-";
  char created[256] = {};
  const int rc = ::zoo_create(client.handle(), prefix.c_str(), "me", 2, &ZOO_OPEN_ACL_UNSAFE,
                              ZOO_EPHEMERAL | ZOO_SEQUENCE, created, sizeof created);
  EXPECT_EQ(rc, ZCONNECTIONLOSS) << ::zerror(rc);
  EXPECT_TRUE(proxy->wait_reply_dropped(kSoon));
  EXPECT_EQ(proxy->frames_dropped(), 1u);

  // The client reconnects to the same session, and the node it never heard of is there.
  ASSERT_TRUE(client.wait_connected(kSoon));
  EXPECT_EQ(client.session_id(), session);
  String_vector children{};
  ASSERT_EQ(::zoo_get_children(client.handle(), parent.c_str(), 0, &children), ZOK);
  std::vector<std::string> names(children.data, children.data + children.count);
  ::deallocate_String_vector(&children);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0].rfind("x-lock-", 0), 0u) << names[0];
  struct Stat stat {};
  ASSERT_EQ(::zoo_exists(client.handle(), (parent + "/" + names[0]).c_str(), 0, &stat), ZOK);
  EXPECT_EQ(stat.ephemeralOwner, session);
}

TEST_F(FaultProxyZooKeeperTest, LongBlackholeExpiresTheSession) {
  const std::string parent = new_parent("expire");
  auto proxy = FaultProxy::start("127.0.0.1", server_.port);
  RawZkClient victim(proxy->connect_string(), 2000);
  ASSERT_TRUE(victim.wait_connected(kSoon));
  const std::string node = parent + "/held";
  ASSERT_EQ(::zoo_create(victim.handle(), node.c_str(), nullptr, -1, &ZOO_OPEN_ACL_UNSAFE,
                         ZOO_EPHEMERAL, nullptr, 0),
            ZOK);
  RawZkClient observer(server_.connect, 10000);  // direct, not through the proxy
  ASSERT_TRUE(observer.wait_connected(kSoon));

  proxy->blackhole();
  // The server expires the victim's session and deletes its ephemeral node.
  int rc = ZOK;
  EXPECT_TRUE(wait_until([&] { return (rc = observer.exists(node)) != ZOK; }, 20s, 50ms));
  EXPECT_EQ(rc, ZNONODE);
  proxy->heal();
  EXPECT_TRUE(victim.wait_state([](int s) { return s == ZOO_EXPIRED_SESSION_STATE; }, kSoon));
}

}  // namespace
}  // namespace zklock::testing
