// TLS between zklock and ZooKeeper against a real server (secureClientPort, the Netty connection
// factory, ssl.clientAuth=need and the X509AuthenticationProvider): locks over TLS, the typed
// errors that replace a connection when TLS cannot be had - each within its bound, never a hang -
// and certificate identities on the nodes zklock creates. Built only when the C client has TLS.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "error_of.h"
#include "support/fault_proxy.h"
#include "support/raw_zk_client.h"
#include "support/socket_io.h"
#include "test_env.h"
#include "tls_fixture.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

// The C client this binary runs with is the TLS one it was built against, not Debian's (both are
// libzookeeper_mt.so.2): the run-time loader found it through the build's RPATH.
TEST(TlsClientTest, TheTlsClientIsTheOneLoaded) {
  EXPECT_TRUE(Session::tls_available());
  std::ifstream maps("/proc/self/maps");
  std::stringstream all;
  all << maps.rdbuf();
  const std::string loaded = std::filesystem::canonical(ZKLOCK_TEST_ZOOKEEPER_LIBRARY).string();
  EXPECT_NE(all.str().find(loaded), std::string::npos) << all.str();
  EXPECT_EQ(all.str().find("/usr/lib/x86_64-linux-gnu/libzookeeper_mt"), std::string::npos);
}

TEST(TlsSessionTest, MutexHandoffBetweenTwoTlsSessions) {
  TlsServer& server = tls_server();
  const std::string path = unique_path("tls-mutex");
  Session a(server.options("holder"));
  Session b(server.options("holder"));
  EXPECT_TRUE(a.encrypted());
  EXPECT_TRUE(b.encrypted());
  Mutex first(a, path);
  Mutex second(b, path);
  first.lock();
  std::future<void> waiting = std::async(std::launch::async, [&] { second.lock(); });
  // Queued behind the holder (two nodes), and not through before the holder lets go.
  ASSERT_TRUE(wait_until([&] { return lock_children(a, path).size() == 2; }, 10s));
  EXPECT_EQ(waiting.wait_for(0ms), std::future_status::timeout);
  first.unlock();
  ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
  waiting.get();
  EXPECT_EQ(second.state(), LockState::kHeld);
  EXPECT_EQ(first.state(), LockState::kNotHeld);
  second.unlock();
  ASSERT_TRUE(wait_until([&] { return lock_children(a, path).empty(); }, 5s));
}

TEST(TlsSessionTest, SharedMutexSemaphoreAndAsyncLockOverTls) {
  TlsServer& server = tls_server();
  Session s(server.options("holder"));
  ASSERT_TRUE(s.encrypted());
  const std::string rw_path = unique_path("tls-rw");
  SharedMutex rw(s, rw_path);
  SharedMutex rw2(s, rw_path);
  rw.lock_shared();
  ASSERT_TRUE(rw2.try_lock_shared_for(5s));                   // readers share it
  EXPECT_FALSE(SharedMutex(s, rw_path).try_lock_for(200ms));  // a writer waits
  rw.unlock_shared();
  rw2.unlock_shared();

  const std::string sem_path = unique_path("tls-sem");
  Semaphore sem(s, sem_path, 2);
  Lease one = sem.acquire();
  Lease two = sem.acquire();
  EXPECT_FALSE(sem.try_acquire().has_value());  // two leases of two are taken
  one.release();
  EXPECT_TRUE(sem.try_acquire_for(5s).has_value());
  two.release();

  const std::string async_path = unique_path("tls-async");
  Mutex m(s, async_path);
  std::future<Hold> hold = m.lock_future();
  ASSERT_EQ(hold.wait_for(10s), std::future_status::ready);
  Hold h = hold.get();
  EXPECT_EQ(h.state(), LockState::kHeld);
  EXPECT_EQ(lock_children(s, async_path).size(), 1u);
  h.unlock();
  EXPECT_NE(h.state(), LockState::kHeld);
  ASSERT_TRUE(wait_until([&] { return lock_children(s, async_path).empty(); }, 5s));
}

// What cannot be had is a typed error, within its bound.
constexpr auto kConnectTimeout = 3s;

template <class Fn>
std::pair<Errc, Clock::duration> timed_error(Fn&& fn) {
  const auto start = Clock::now();
  const Errc e = error_of(fn);
  return {e, Clock::now() - start};
}

TEST(TlsErrorTest, AWrongKeyPasswordAnExpiredCertificateOrAMissingFileFailAtOnce) {
  TlsServer& server = tls_server();
  SessionOptions o = server.options("holder", kConnectTimeout);
  o.tls->key_password = "not the password";
  auto [wrong, wrong_took] = timed_error([&] { Session s(o); });
  EXPECT_EQ(wrong, Errc::tls);
  EXPECT_LT(wrong_took, 1s);
  EXPECT_THROW(Session{o}, TlsError);

  o = server.options("expired", kConnectTimeout);
  auto [expired, expired_took] = timed_error([&] { Session s(o); });
  EXPECT_EQ(expired, Errc::tls);
  EXPECT_LT(expired_took, 1s);

  o = server.options("holder", kConnectTimeout);
  o.tls->ca_file = server.pki() + "/no-such-file.pem";
  EXPECT_EQ(error_of([&] { Session s(o); }), Errc::tls);
  o = server.options("holder", kConnectTimeout);
  o.tls->key_file = server.pki() + "/intruder.key";  // not the certificate's key
  o.tls->key_password.clear();
  EXPECT_EQ(error_of([&] { Session s(o); }), Errc::tls);
  o = server.options("holder", kConnectTimeout);
  o.tls->cert_file.clear();
  EXPECT_EQ(error_of([&] { Session s(o); }), Errc::invalid_argument);
}

TEST(TlsErrorTest, ACaThatDoesNotSignTheServerIsATlsErrorAfterTheConnectTimeout) {
  TlsServer& server = tls_server();
  SessionOptions o = server.options("holder", kConnectTimeout);
  o.tls->ca_file = server.pki() + "/other-ca.pem";
  auto [e, took] = timed_error([&] { Session s(o); });
  EXPECT_EQ(e, Errc::tls);
  EXPECT_GE(took, kConnectTimeout - 100ms);
  EXPECT_LT(took, kConnectTimeout + 5s);
}

TEST(TlsErrorTest, AServerThatSpeaksPlainTextIsATlsErrorAfterTheConnectTimeout) {
  TlsServer& server = tls_server();
  SessionOptions o = server.options("holder", kConnectTimeout);
  o.connect = server.server().connect_string();  // the plain client port
  auto [e, took] = timed_error([&] { Session s(o); });
  EXPECT_EQ(e, Errc::tls);
  EXPECT_LT(took, kConnectTimeout + 5s);
}

// A peer that accepts the connection and never answers: the 3.8 C client's handshake would wait
// for it forever (and zookeeper_close with it). The Session gives up at its connect timeout and
// closes within a bound.
TEST(TlsErrorTest, ASilentPeerIsAConnectionLossAtTheConnectTimeoutNotAHang) {
  TlsServer& server = tls_server();
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = 0;
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(::listen(listener, 16), 0);  // the kernel accepts; nobody ever answers
  socklen_t length = sizeof sa;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&sa), &length), 0);
  SessionOptions o = server.options("holder", kConnectTimeout);
  o.connect = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  auto [e, took] = timed_error([&] { Session s(o); });
  ::close(listener);
  EXPECT_EQ(e, Errc::connection_loss);
  EXPECT_GE(took, kConnectTimeout - 100ms);
  EXPECT_LT(took, kConnectTimeout + 5s);
}

// Certificate identities: with ssl.clientAuth=need the server knows each client by the subject
// of its certificate, and the nodes zklock creates name it (x509 ACL). Another certificate of the
// same CA can read the queue, and cannot delete, change or queue behind the held lock.
// Servers listed before the live one that never answer - one accepts and says nothing (a hung
// JVM, a handshake that never completes), one drops every SYN (a host that is down): the C
// client gives up on neither by itself over TLS, and picks servers in a random order. Each
// session still connects within its connect timeout: zklock cuts a first connect or handshake
// that has lasted suspend_after (T/3), and the C client tries the next server. (Before, about
// three sessions in four failed here.)
TEST(TlsErrorTest, ServersThatNeverAnswerListedBeforeTheLiveOneDoNotKeepASessionFromIt) {
  TlsServer& server = tls_server();
  // Accepts (the kernel does) and never answers.
  int silent_port = 0;
  const UniqueFd silent = listen_loopback(&silent_port);
  ASSERT_TRUE(silent.valid());
  // Drops every SYN.
  int full_port = 0;
  UniqueFd filler;
  const UniqueFd full = listen_dropping_syns(&full_port, &filler);
  ASSERT_TRUE(full.valid());

  SessionOptions options = server.options("holder");
  options.connect = "127.0.0.1:" + std::to_string(silent_port) +
                    ",127.0.0.1:" + std::to_string(full_port) + "," + options.connect;
  options.session_timeout = 3s;  // suspend_after 1 s: two dead servers cost 2 s of the 10
  for (int i = 0; i < 4; ++i) {
    std::unique_ptr<Session> s;
    EXPECT_NO_THROW(s = std::make_unique<Session>(options)) << "session " << i;
    if (s) {
      EXPECT_TRUE(s->encrypted());
    }
  }
}

TEST(TlsIdentityTest, AnotherCertificateCannotBreakTheLock) {
  TlsServer& server = tls_server();
  const std::string base = unique_path("tls-acl");
  {
    // An open base: the shared ancestors belong to the holder's identity (the first TLS session
    // of this process created them).
    SessionOptions o = server.options("holder");
    o.node_acl = open_acl();
    Session admin(o);
    admin.create(base, {}, CreateMode::kPersistent, true);
  }
  const std::string path = base + "/app/locks/job";
  Session holder_session(server.options("holder"));
  Mutex holder(holder_session, path);
  holder.lock();
  const std::string node = holder.acquisition()->node_path;

  Session intruder(server.options("intruder"));
  ASSERT_TRUE(intruder.encrypted());
  EXPECT_EQ(lock_children(intruder, path).size(), 1u);  // reading is allowed
  EXPECT_TRUE(intruder.get(node).has_value());
  EXPECT_EQ(error_of([&] { intruder.remove(node); }), Errc::no_auth);
  EXPECT_EQ(error_of([&] { intruder.set(node, "mine now"); }), Errc::no_auth);
  EXPECT_EQ(error_of([&] { intruder.set(path, "x"); }), Errc::no_auth);
  EXPECT_EQ(error_of([&] { intruder.set(base + "/app", "x"); }), Errc::no_auth);
  Mutex intruding(intruder, path);
  EXPECT_THROW((void)intruding.try_lock_for(2s), NotAuthorizedError);
  EXPECT_EQ(lock_children(intruder, path).size(), 1u) << "the refused contender left a node";
  EXPECT_EQ(holder.state(), LockState::kHeld);

  // The ACL the server stored names the holder's certificate subject (RFC 2253), on the held
  // node and on the parents zklock created; everyone else may read.
  RawZkClient raw(server.server().connect_string());
  ASSERT_TRUE(raw.wait_connected());
  for (const std::string& p : {node, path, base + "/app"}) {
    SCOPED_TRACE(p);
    struct ACL_vector acl {};
    struct Stat stat {};
    ASSERT_EQ(zoo_get_acl(raw.handle(), p.c_str(), &acl, &stat), ZOK);
    std::vector<std::string> entries;
    for (int i = 0; i < acl.count; ++i) {
      entries.push_back(std::string(acl.data[i].id.scheme) + ":" + acl.data[i].id.id + ":" +
                        std::to_string(acl.data[i].perms));
    }
    deallocate_ACL_vector(&acl);
    EXPECT_EQ(entries, (std::vector<std::string>{"x509:" + TlsServer::identity("holder") + ":31",
                                                 "world:anyone:1"}));
  }

  holder.unlock();
  Session same_identity(server.options("holder"));
  Mutex again(same_identity, path);
  EXPECT_TRUE(again.try_lock_for(5s));
  again.unlock();
  ASSERT_TRUE(wait_until([&] { return lock_children(intruder, path).empty(); }, 5s));
}

// Freezes a server (SIGSTOP) until the end of the scope, when it thaws it (SIGCONT) - also when a
// failed assertion leaves the test early; thawing it sooner is harmless.
class FrozenWhileInScope {
 public:
  explicit FrozenWhileInScope(ZkServer& server) : server_(server) { server_.freeze(); }
  ~FrozenWhileInScope() { server_.thaw(); }
  FrozenWhileInScope(const FrozenWhileInScope&) = delete;
  FrozenWhileInScope& operator=(const FrozenWhileInScope&) = delete;

 private:
  ZkServer& server_;
};

// A server that stops answering for half the session timeout (a frozen JVM: its kernel still
// accepts connections, so each new TLS handshake waits on a silent peer) while a lock is held.
// zklock forces a new connection every reconnect interval - over TLS by shutting the socket down,
// never by zoo_set_servers under the C client's SSL state - and the session and the lock survive.
TEST(TlsReconnectTest, AServerSilentForHalfTheTimeoutKeepsTheSessionAndTheLock) {
  TlsServer& server = tls_server();
  const std::string path = unique_path("tls-blip");
  Session s(server.options("holder"));
  Mutex m(s, path);
  m.lock();
  const auto timeout = s.negotiated_timeout();
  const auto before = s.metrics().forced_reconnects;
  const auto frozen_at = Clock::now();
  const FrozenWhileInScope frozen(server.server());
  EXPECT_TRUE(wait_until([&] { return s.state() == SessionState::kSuspended; }, timeout));
  EXPECT_TRUE(wait_until([&] { return s.metrics().forced_reconnects > before + 1; }, timeout / 2))
      << "no forced reconnect while silent";
  // The fault lasts half the timeout from its start: this wait is its length, not a
  // synchronisation.
  std::this_thread::sleep_until(frozen_at + timeout / 2);
  server.server().thaw();
  EXPECT_TRUE(s.wait_connected(timeout));
  EXPECT_EQ(s.state(), SessionState::kConnected);
  EXPECT_EQ(s.generation(), 1u) << "the session was lost";
  EXPECT_EQ(m.state(), LockState::kHeld);
  EXPECT_TRUE(s.encrypted());
  m.unlock();
  ASSERT_TRUE(wait_until([&] { return lock_children(s, path).empty(); }, 5s));
}

// The same server frozen past the session timeout: the holder is told Lost at its deadline, as
// over plain TCP. (The C client with OpenSSL fails the requests pending on a failed handshake
// with ZSSLCONNECTIONERROR, -15, a code zklock once took for a server's answer: every failed
// handshake then kept the session "alive" and the holder was never told.)
TEST(TlsReconnectTest, AServerFrozenPastTheTimeoutTellsTheHolderLost) {
  TlsServer& server = tls_server();
  const std::string path = unique_path("tls-frozen");
  Session s(server.options("holder"));
  Mutex m(s, path);
  m.lock();
  const auto timeout = s.negotiated_timeout();
  const FrozenWhileInScope frozen(server.server());
  const auto frozen_at = Clock::now();
  // Lost within T of the last answer (before the freeze), whatever the failed handshakes say;
  // the bound leaves room for a slow machine, not for a missed deadline (that is never).
  ASSERT_TRUE(wait_until([&] { return m.state() == LockState::kLost; }, timeout + 5s))
      << "the holder was not told Lost within " << (timeout + 5s).count() << " ms of the freeze";
  EXPECT_LE(Clock::now() - frozen_at, timeout + 5s);
  EXPECT_NE(s.state(), SessionState::kConnected);
  server.server().thaw();
  EXPECT_TRUE(wait_until([&] { return s.state() == SessionState::kConnected; }, 30s));
  EXPECT_GE(s.generation(), 2u) << "the session went on after its timeout";
  EXPECT_TRUE(s.encrypted());
  ASSERT_TRUE(wait_until([&] { return lock_children(s, path).empty(); }, 30s))
      << "the lost holder's node outlived its session";
}

// The C client with OpenSSL fails every request pending on a failed TLS handshake with a code of
// its own, ZSSLCONNECTIONERROR (-15). To a request that is the connection lost: a lock asked for
// while every handshake fails (a proxy that resets each new connection) goes on and is taken,
// with one node, once a handshake succeeds. (zklock once took -15 for a refusal: the attempt
// failed with an unknown error code.)
TEST(TlsReconnectTest, ALockAskedForWhileHandshakesFailIsTakenOnceOneSucceeds) {
  TlsServer& server = tls_server();
  auto proxy = FaultProxy::start("127.0.0.1", server.server().secure_port());
  SessionOptions options = server.options("holder");
  options.connect = proxy->connect_string();
  options.session_timeout = 20s;  // nothing here is about the session's end
  Session s(options);
  Session observer(server.options("holder"));
  const std::string path = unique_path("tls-handshakes-fail");
  Mutex m(s, path);
  proxy->refuse_new(true);
  proxy->reset_all();
  auto locked = std::async(std::launch::async, [&] { return m.try_lock_for(40s); });
  // Handshakes fail while the attempt's first request waits for a connection.
  const std::size_t refused = proxy->refused();
  ASSERT_TRUE(wait_until([&] { return proxy->refused() >= refused + 3; }, 15s))
      << "the C client did not try to reconnect";
  EXPECT_EQ(locked.wait_for(0s), std::future_status::timeout) << "the attempt ended at once";
  proxy->refuse_new(false);
  ASSERT_EQ(locked.wait_for(30s), std::future_status::ready) << "the attempt did not end";
  bool acquired = false;
  EXPECT_NO_THROW(acquired = locked.get()) << "a failed handshake failed the lock attempt";
  EXPECT_TRUE(acquired);
  EXPECT_EQ(lock_children(observer, path).size(), 1u) << "an orphan, or no node";
  EXPECT_EQ(s.generation(), 1u);
  if (acquired) m.unlock();
  EXPECT_TRUE(wait_until([&] { return lock_children(observer, path).empty(); }, 5s));
}

}  // namespace
}  // namespace zklock::testing
