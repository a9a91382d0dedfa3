// Locks no one else can break: the ACL of the nodes zklock creates, and credentials the server
// refuses, against a real server.
#include <atomic>
#include <mutex>

#include "error_of.h"
#include "scripted_hook.h"
#include "test_env.h"
#include "waiter.h"
#include "zklock/testing/fault_hook.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

SessionOptions with_credentials(SessionOptions o, const std::string& user,
                                const std::string& password) {
  o.credentials = DigestCredentials{user, password};
  return o;
}

// A fresh base path, created open by a session without credentials: the shared ancestors
// (/zklock-test) stay open for the other tests of this process.
std::string open_base(const std::string& connect, const std::string& stem) {
  const std::string base = unique_path(stem);
  Session admin(options_for(connect));
  admin.create(base, {}, CreateMode::kPersistent, true);
  return base;
}

// TLS asked of a zklock whose C client has none (Debian's): refused at construction, before any
// connection is made (the connect string names no server), naming the fix - never plain text.
// tests/tls covers a client with TLS.
TEST(SessionTlsTest, TlsAskedOfAClientWithoutItIsATlsErrorNamingTheFix) {
  if (Session::tls_available()) GTEST_SKIP() << "this build's C client has TLS (tests/tls)";
  SessionOptions o = options_for("127.0.0.1:1");
  o.tls = TlsOptions{"ca.pem", "client.pem", "client.key", ""};
  try {
    Session s(o);
    FAIL() << "a Session without TLS";
  } catch (const TlsError& e) {
    EXPECT_EQ(e.errc(), Errc::tls);
    EXPECT_NE(std::string(e.what()).find("scripts/zookeeper-client.sh"), std::string::npos)
        << e.what();
  }
  o.tls->ca_file = "a,b.pem";  // the C client splits its settings on commas
  EXPECT_THROW(Session{o}, InvalidArgumentError);
}

TEST(SessionAclTest, WithCredentialsNoOneElseCanBreakTheLock) {
  auto server = shared_server();
  const std::string base = open_base(server.connect, "acl") + "/app";
  const std::string path = base + "/locks/job";
  Session holder_session(with_credentials(options_for(server.connect), "app", "secret"));
  Mutex holder(holder_session, path);
  holder.lock();
  const std::string node = holder.acquisition()->node_path;

  Session intruder(options_for(server.connect));  // no credentials
  // Reading is allowed: `zklock status` works for anyone.
  EXPECT_EQ(lock_children(intruder, path).size(), 1u);
  EXPECT_TRUE(intruder.get(node).has_value());
  // Breaking is not: the held node, its data, the lock path and the parents zklock created.
  EXPECT_EQ(error_of([&] { intruder.remove(node); }), Errc::no_auth);
  EXPECT_EQ(error_of([&] { intruder.set(node, "mine now"); }), Errc::no_auth);
  EXPECT_EQ(error_of([&] { intruder.set(path, "x"); }), Errc::no_auth);
  EXPECT_EQ(error_of([&] { intruder.set(base, "x"); }), Errc::no_auth);
  EXPECT_THROW(intruder.remove(node), NotAuthorizedError);
  // Nor queue behind it, or in front of it.
  Mutex intruding(intruder, path);
  EXPECT_THROW((void)intruding.try_lock_for(2s), NotAuthorizedError);
  EXPECT_EQ(lock_children(intruder, path).size(), 1u) << "the refused contender left a node";

  EXPECT_EQ(holder.state(), LockState::kHeld);
  FencedWrite w;
  w.create(base + "/fenced", "by the holder");
  EXPECT_NO_THROW(holder.commit_fenced(w));
  holder.unlock();
  // Released: the empty lock path still belongs to the application.
  ASSERT_TRUE(wait_until([&] { return lock_children(intruder, path).empty(); }, 5s));
  EXPECT_EQ(error_of([&] { intruder.remove(path); }), Errc::no_auth);
}

// The other recipes create their nodes through the same layer: a reader's node, a semaphore's
// lease, its count and its locks/leases children are just as protected.
TEST(SessionAclTest, ReadWriteLockAndSemaphoreNodesAreProtectedToo) {
  auto server = shared_server();
  const std::string base = open_base(server.connect, "acl-recipes") + "/app";
  Session owner(with_credentials(options_for(server.connect), "app", "secret"));
  Session intruder(options_for(server.connect));  // no credentials

  SharedMutex shared(owner, base + "/config");
  shared.lock_shared();
  const std::string reader_node = shared.acquisition()->node_path;
  EXPECT_TRUE(intruder.get(reader_node).has_value());  // readable: status works for anyone
  EXPECT_EQ(error_of([&] { intruder.remove(reader_node); }), Errc::no_auth);
  SharedMutex intruding_writer(intruder, base + "/config");
  EXPECT_THROW((void)intruding_writer.try_lock_for(2s), NotAuthorizedError);
  EXPECT_EQ(shared.state(), LockState::kHeld);
  shared.unlock_shared();

  Semaphore semaphore(owner, base + "/pool", 2);
  Lease lease = semaphore.acquire();
  const std::string lease_node = lease.acquisition().node_path;
  EXPECT_EQ(error_of([&] { intruder.remove(lease_node); }), Errc::no_auth);
  EXPECT_EQ(error_of([&] { intruder.set(base + "/pool", "100"); }), Errc::no_auth)
      << "the stored lease count could be changed";
  EXPECT_EQ(error_of([&] { intruder.create(base + "/pool/leases/mine", {}); }), Errc::no_auth);
  EXPECT_EQ(error_of([&] { intruder.create(base + "/pool/locks/mine", {}); }), Errc::no_auth);
  EXPECT_EQ(lease.state(), LockState::kHeld);
}

TEST(SessionAclTest, ContendersSharingTheCredentialsQueueTogether) {
  auto server = shared_server();
  const std::string path = open_base(server.connect, "acl-shared") + "/lock";
  Session a(with_credentials(options_for(server.connect), "app", "secret"));
  Session b(with_credentials(options_for(server.connect), "app", "secret"));
  Mutex first(a, path), second(b, path);
  first.lock();
  Waiter w(second);
  ASSERT_TRUE(wait_until([&] { return lock_children(a, path).size() == 2; }, 5s)) << w.error();
  first.unlock();
  ASSERT_TRUE(wait_until([&] { return w.acquired(); }, 5s)) << w.error();
  // The same identity may also break the lock of another of its sessions: the ACL keeps out others.
  second.unlock();
  EXPECT_TRUE(wait_until([&] { return lock_children(a, path).empty(); }, 5s));
}

TEST(SessionAclTest, AnOpenAclCanBeChosenAndAnotherIdentityListed) {
  auto server = shared_server();
  const std::string path = open_base(server.connect, "acl-open") + "/lock";
  SessionOptions o = with_credentials(options_for(server.connect), "app", "secret");
  o.node_acl = open_acl();
  Session s(o);
  Mutex m(s, path);
  m.lock();
  Session other(options_for(server.connect));
  EXPECT_TRUE(other.remove(m.acquisition()->node_path)) << "open means open";
  EXPECT_TRUE(m.wait_lost_for(10s));
  m.unlock();
}

TEST(SessionAclTest, AnAclNamingTheCreatorNeedsCredentials) {
  auto server = shared_server();
  SessionOptions o = options_for(server.connect);
  o.node_acl = creator_all_world_read();
  EXPECT_THROW(Session{o}, InvalidArgumentError);
  o.node_acl = Acl{};
  EXPECT_THROW(Session{o}, InvalidArgumentError);
  o.node_acl = Acl{{0, "world", "anyone"}};
  EXPECT_THROW(Session{o}, InvalidArgumentError);
}

// The server refusing the credentials is a typed error at construction, not a hang. (Digest
// credentials are never refused by ZooKeeper - a wrong password only makes later operations fail
// with NotAuthorizedError - so the refusal is injected where the C client reports it.)
TEST(SessionAclTest, RefusedCredentialsAreNotAuthorizedAtConstruction) {
  auto server = shared_server();
  auto refuse_auth = std::make_shared<ScriptedHook>(
      fault_on(Operation::kAddAuth, "", FaultDecision::fail_before_send(Errc::auth_failed)));
  SessionOptions o = with_credentials(options_for(server.connect), "app", "secret");
  o.connect_timeout = 10s;
  const auto start = std::chrono::steady_clock::now();
  try {
    open_session(o, refuse_auth);
    ADD_FAILURE() << "the Session was opened with refused credentials";
  } catch (const NotAuthorizedError& e) {
    EXPECT_EQ(e.errc(), Errc::auth_failed) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "waited for the connect timeout";
}

TEST(SessionAclTest, ALockPathOfSomeoneElseIsNotAuthorizedAndLeavesNothing) {
  auto server = shared_server();
  const std::string path = open_base(server.connect, "acl-foreign") + "/lock";
  Session owner(with_credentials(options_for(server.connect), "owner", "pw"));
  owner.create(path, {}, CreateMode::kPersistent, true);
  Session other(with_credentials(options_for(server.connect), "other", "pw"));
  Mutex m(other, path);
  EXPECT_THROW(m.lock(), NotAuthorizedError);
  EXPECT_TRUE(lock_children(owner, path).empty());
}

}  // namespace
}  // namespace zklock::testing
