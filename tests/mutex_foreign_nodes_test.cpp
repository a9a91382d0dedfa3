// zklock::Mutex beside contenders it did not create and may not read: another application's lock
// nodes under the same path, created without READ permission for us.
#include <zookeeper/zookeeper.h>

#include "test_env.h"
#include "waiter.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

// A contender created by another identity with an ACL only it may use: we can see the name and
// its stat (exists needs no permission), not its data.
class UnreadableContender {
 public:
  UnreadableContender(const std::string& connect, const std::string& path) {
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    zh_ = zookeeper_init(connect.c_str(), nullptr, 10000, nullptr, nullptr, 0);
    if (!zh_) throw std::runtime_error("zookeeper_init");
    wait_until([&] { return zoo_state(zh_) == ZOO_CONNECTED_STATE; }, 10s);
    const std::string credentials = "other-app:pw";
    zoo_add_auth(zh_, "digest", credentials.data(), static_cast<int>(credentials.size()), nullptr,
                 nullptr);
    char created[512];
    const std::string prefix = path + "/_c_00000000-0000-4000-8000-000000000000-lock-";
    const int rc = zoo_create(zh_, prefix.c_str(), "secret", 6, &ZOO_CREATOR_ALL_ACL,
                              ZOO_EPHEMERAL_SEQUENTIAL, created, sizeof created);
    if (rc != ZOK) throw std::runtime_error("create: " + std::to_string(rc));
    node_ = created;
  }
  ~UnreadableContender() { release(); }
  const std::string& node() const { return node_; }
  void release() {
    if (zh_) zookeeper_close(zh_);  // its ephemeral node goes with it
    zh_ = nullptr;
  }

 private:
  zhandle_t* zh_ = nullptr;
  std::string node_;
};

TEST(MutexForeignNodesTest, AContenderWeMayNotReadIsQueuedBehindNotAnError) {
  auto server = shared_server();
  const std::string path = unique_path("unreadable");
  Session s(options_for(server.connect));
  s.create(path, {}, CreateMode::kPersistent, true);
  UnreadableContender foreign(server.connect, path);
  Mutex m(s, path);
  EXPECT_FALSE(m.try_lock());  // it is first: we are not, and that is all
  // contenders() lists it, data unknown, without failing.
  const auto all = m.contenders();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(path + "/" + all[0].name, foreign.node());
  EXPECT_TRUE(all[0].data.empty());
  EXPECT_GT(all[0].czxid, 0);
  // Waiting behind it watches the lock path's children (ZooKeeper delivers no event for a node we
  // may not read), and gets the lock when it goes.
  Waiter w(m);
  ASSERT_TRUE(wait_until([&] { return lock_children(s, path).size() == 2; }, 5s)) << w.error();
  EXPECT_FALSE(w.done()) << w.error();
  foreign.release();
  ASSERT_TRUE(wait_until([&] { return lock_children(s, path).size() == 1; }, 10s))
      << "the foreign node did not go";
  ASSERT_TRUE(wait_until([&] { return w.done(); }, 10s))
      << "children: " << lock_children(s, path).size();
  EXPECT_TRUE(w.acquired()) << w.error();
  m.unlock();
  EXPECT_TRUE(wait_until([&] { return watches_under(server.port, path).empty(); }, 5s));
}

// Curator's InterProcessReadWriteLock and kazoo's ReadLock: their readers look only for their own
// writers' names and would enter beside a Mutex, so the Mutex refuses the path, with nothing left.
TEST(MutexForeignNodesTest, ReadWriteLockNodesOfOtherLibrariesAreRefusedNotIgnored) {
  auto server = shared_server();
  for (const std::string prefix : {"_c_00000000-0000-4000-8000-000000000000-__READ__",
                                   "_c_00000000-0000-4000-8000-000000000000-__WRIT__",
                                   "0123456789abcdef0123456789abcdef__rlock__"}) {
    SCOPED_TRACE(prefix);
    const std::string path = unique_path("rw-foreign");
    Session foreign(options_for(server.connect));
    foreign.create(path, {}, CreateMode::kPersistent, true);
    // Named as the server names a sequential node (the refusal does not depend on the order).
    const std::string node =
        foreign.create(path + "/" + prefix + "0000000000", {}, CreateMode::kEphemeral);
    Session s(options_for(server.connect));
    Mutex m(s, path);
    try {
      (void)m.try_lock_for(5s);
      ADD_FAILURE() << "a Mutex entered or queued beside " << node;
    } catch (const Error& e) {
      EXPECT_EQ(e.errc(), Errc::incompatible_lock) << e.what();
    }
    EXPECT_EQ(lock_children(s, path).size(), 1u) << "the refused Mutex left its node";
    EXPECT_TRUE(wait_until([&] { return watches_under(server.port, path).empty(); }, 5s));
    // Once the read/write lock is gone, the path is the Mutex's like any other.
    foreign.remove(node);
    EXPECT_TRUE(m.try_lock_for(5s));
    m.unlock();
  }
}

}  // namespace
}  // namespace zklock::testing
