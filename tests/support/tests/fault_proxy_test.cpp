// Tests of the TCP fault proxy (tests/support/fault_proxy.h).
//
// Most tests run the proxy in front of small servers written here: a raw byte echo server and a
// "frame server" that speaks ZooKeeper's framing (length-prefixed frames, a ConnectResponse first,
// then replies carrying a reply header). A few run it in front of a real ZooKeeper server with the
// ZooKeeper C client; those need the C client (THREADED, -lzookeeper_mt) and skip if no server
// can be started.
//
// Waits are bounded by deadlines; the only fixed-length waits are "nothing arrives for N ms"
// windows that check an absence, and every timing assertion is a lower bound.
#include "support/fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/wait.h"
#include "support/zk_server.h"

#if defined(THREADED)
#include <zookeeper/zookeeper.h>
#endif

namespace zklock::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kSoon = 10s;       // upper bound for anything that should happen "soon"
constexpr auto kSilence = 300ms;  // window in which something must NOT happen

// ---------------------------------------------------------------------------------------------
// Sockets.

// Owns a file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// A blocking TCP connection to 127.0.0.1:port (the connect itself completes against the
// listen backlog, so it succeeds even when the proxy then refuses or resets).
Fd connect_to(int port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return fd;
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    return Fd();
  }
  return fd;
}

// A listening socket on 127.0.0.1:<free port>.
Fd listen_loopback(int* port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd.get(), 64) != 0) {
    return Fd();
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

// A port on which nothing listens (it was free a moment ago).
int unused_port() {
  int port = 0;
  Fd fd = listen_loopback(&port);
  return port;
}

int ms_until(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, left.count()));
}

// Waits until fd is readable; false on deadline.
bool wait_readable(int fd, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, ms_until(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

bool send_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

enum class Read { kOk, kTimeout, kEof, kError };

// Reads exactly n bytes (appended to *out) before the deadline.
Read recv_exact(int fd, size_t n, std::string* out, Clock::time_point deadline) {
  char buf[64 * 1024];
  while (n > 0) {
    if (!wait_readable(fd, deadline)) return Read::kTimeout;
    const ssize_t r = ::recv(fd, buf, std::min(n, sizeof buf), 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Read::kError;
    if (r == 0) return Read::kEof;
    out->append(buf, static_cast<size_t>(r));
    n -= static_cast<size_t>(r);
  }
  return Read::kOk;
}

// Waits until the peer closes fd (EOF) or resets it, discarding data meanwhile. Returns kEof,
// kError (errno in *err, e.g. ECONNRESET) or kSoon.
Read wait_closed(int fd, Clock::time_point deadline, int* err = nullptr) {
  char buf[4096];
  for (;;) {
    if (!wait_readable(fd, deadline)) return Read::kTimeout;
    const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return Read::kEof;
    if (r < 0) {
      if (err != nullptr) *err = errno;
      return Read::kError;
    }
  }
}

// True if nothing (no byte, no EOF, no error) arrives on fd within `window`.
bool stays_silent(int fd, std::chrono::milliseconds window) {
  return !wait_readable(fd, Clock::now() + window);
}

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 4) {
    const uint32_t word = gen();
    std::memcpy(&s[i], &word, std::min<size_t>(4, n - i));
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// ZooKeeper-like framing.

std::string be32(int32_t v) {
  const uint32_t n = htonl(static_cast<uint32_t>(v));
  return std::string(reinterpret_cast<const char*>(&n), 4);
}

int32_t load_be32(const std::string& s, size_t at = 0) {
  uint32_t n = 0;
  std::memcpy(&n, s.data() + at, 4);
  return static_cast<int32_t>(ntohl(n));
}

std::string frame(const std::string& payload) {
  return be32(static_cast<int32_t>(payload.size())) + payload;
}

// A client request payload: xid, then the body.
std::string request(int32_t xid, const std::string& body) { return be32(xid) + body; }

// A server reply payload: reply header (xid, zxid, err), then the body.
std::string reply(int32_t xid, const std::string& body, int64_t zxid = 7) {
  return be32(xid) + be32(static_cast<int32_t>(zxid >> 32)) + be32(static_cast<int32_t>(zxid)) +
         be32(0) + body;
}

struct Reply {
  int32_t xid;
  std::string body;
};

Reply parse_reply(const std::string& payload) {
  if (payload.size() < 16) return Reply{INT32_MIN, payload};
  return Reply{load_be32(payload), payload.substr(16)};
}

// Reads one frame's payload; nullopt (with *status set) on timeout, EOF or error.
std::optional<std::string> read_frame(int fd, Clock::time_point deadline, Read* status = nullptr) {
  std::string prefix;
  Read r = recv_exact(fd, 4, &prefix, deadline);
  std::string payload;
  if (r == Read::kOk)
    r = recv_exact(fd, static_cast<uint32_t>(load_be32(prefix)), &payload, deadline);
  if (status != nullptr) *status = r;
  if (r != Read::kOk) return std::nullopt;
  return payload;
}

std::optional<Reply> read_reply(int fd, Clock::time_point deadline, Read* status = nullptr) {
  auto payload = read_frame(fd, deadline, status);
  if (!payload) return std::nullopt;
  return parse_reply(*payload);
}

// ---------------------------------------------------------------------------------------------
// Test servers.

// A loopback server, one thread per connection. kEcho echoes bytes as they come and closes
// after the client's EOF. kFrames speaks ZooKeeper framing: the first frame it receives on a
// connection is answered with a "ConnectResponse" (payload "CONNECTED:" + request, no reply
// header); each later request (xid + body) with one reply frame (same xid, body echoed), except
// a body "trio:NEEDLE", answered with five frames in one send(): a watch event (xid -1) and a
// ping (xid -2) both containing NEEDLE, then replies "first", "hit NEEDLE", "last".
class TestServer {
 public:
  enum class Kind { kEcho, kFrames };

  explicit TestServer(Kind kind) : kind_(kind) {
    listen_ = listen_loopback(&port_);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~TestServer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      for (int fd : open_fds_) {
        if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
      }
    }
    ::shutdown(listen_.get(), SHUT_RDWR);  // wakes accept()
    acceptor_.join();
    for (auto& t : workers_) t.join();
  }

  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  int port() const { return port_; }

  // Request frames received (kFrames, ConnectRequests excluded) / bytes received (kEcho).
  size_t received() const {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }
  // Connections accepted / ended (the proxy side closed or reset them).
  size_t connections() const {
    std::lock_guard<std::mutex> lock(mu_);
    return connections_;
  }
  size_t closed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }
  bool wait_connections(size_t n, std::chrono::milliseconds timeout) const {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return connections_ >= n; });
  }
  bool wait_closed(size_t n, std::chrono::milliseconds timeout) const {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return closed_ >= n; });
  }

  // Writes `bytes` to every open connection, as if the server sent them on its own.
  void push_to_all(const std::string& bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) {
      if (fd >= 0) send_all(fd, bytes);
    }
  }

 private:
  void accept_loop() {
    for (;;) {
      int fd = ::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) {
        ::close(fd);
        return;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      const size_t slot = open_fds_.size();
      open_fds_.push_back(fd);
      ++connections_;
      cv_.notify_all();
      workers_.emplace_back([this, fd, slot] { serve(fd, slot); });
    }
  }

  void serve(int fd, size_t slot) {
    if (kind_ == Kind::kEcho) {
      serve_echo(fd);
    } else {
      serve_frames(fd);
    }
    std::lock_guard<std::mutex> lock(mu_);
    ::close(fd);
    open_fds_[slot] = -1;
    ++closed_;
    cv_.notify_all();
  }

  void serve_echo(int fd) {
    char buf[64 * 1024];
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      {
        std::lock_guard<std::mutex> lock(mu_);
        received_ += static_cast<size_t>(n);
      }
      if (!send_all(fd, std::string(buf, static_cast<size_t>(n)))) return;
    }
  }

  void serve_frames(int fd) {
    const auto forever = Clock::now() + std::chrono::hours(24);
    bool first = true;
    for (;;) {
      auto payload = read_frame(fd, forever);
      if (!payload) return;
      std::string out;
      if (first) {
        out = frame("CONNECTED:" + *payload);
        first = false;
      } else {
        {
          std::lock_guard<std::mutex> lock(mu_);
          ++received_;
        }
        const int32_t xid = load_be32(*payload);
        const std::string body = payload->substr(4);
        if (body.rfind("trio:", 0) == 0) {
          const std::string needle = body.substr(5);
          out = frame(reply(-1, "watch " + needle)) + frame(reply(-2, "ping " + needle)) +
                frame(reply(xid, "first")) + frame(reply(xid, "hit " + needle)) +
                frame(reply(xid, "last"));
        } else {
          out = frame(reply(xid, body));
        }
      }
      std::lock_guard<std::mutex> lock(mu_);  // serialised with push_to_all
      if (!send_all(fd, out)) return;
    }
  }

  const Kind kind_;
  Fd listen_;
  int port_ = 0;
  std::thread acceptor_;
  std::vector<std::thread> workers_;  // joined in the destructor; touched only by acceptor_

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<int> open_fds_;  // -1 once closed
  size_t received_ = 0;
  size_t connections_ = 0;
  size_t closed_ = 0;
};

// A client of the frame server through the proxy: connects and does the connect handshake.
Fd frame_client(const FaultProxy& proxy, const std::string& hello = "hello") {
  Fd fd = connect_to(proxy.port());
  if (fd.get() < 0) return fd;
  if (!send_all(fd.get(), frame(hello))) return Fd();
  auto resp = read_frame(fd.get(), Clock::now() + kSoon);
  if (!resp || *resp != "CONNECTED:" + hello) return Fd();
  return fd;
}

// Sends request (xid, body) and expects its echo as the next frame.
void expect_round_trip(int fd, int32_t xid, const std::string& body) {
  ASSERT_TRUE(send_all(fd, frame(request(xid, body))));
  auto r = read_reply(fd, Clock::now() + kSoon);
  ASSERT_TRUE(r.has_value()) << "no reply to xid " << xid;
  EXPECT_EQ(r->xid, xid);
  EXPECT_EQ(r->body, body);
}

// ---------------------------------------------------------------------------------------------
// Pass mode.

TEST(FaultProxyTest, StartsOnLoopbackAndRejectsBadPorts) {
  TestServer server(TestServer::Kind::kEcho);
  auto proxy = FaultProxy::start("localhost", server.port());
  ASSERT_NE(proxy, nullptr);
  EXPECT_GT(proxy->port(), 0);
  EXPECT_NE(proxy->port(), server.port());
  EXPECT_EQ(proxy->connect_string(), "127.0.0.1:" + std::to_string(proxy->port()));
  EXPECT_EQ(proxy->mode(), ProxyMode::kPass);
  EXPECT_EQ(proxy->accepted(), 0u);
  EXPECT_EQ(proxy->live(), 0u);
  EXPECT_THROW(FaultProxy::start("127.0.0.1", 0), std::invalid_argument);
  EXPECT_THROW(FaultProxy::start("127.0.0.1", 70000), std::invalid_argument);
  EXPECT_THROW(FaultProxy::start("no-such-host.invalid", 2181), std::runtime_error);
  EXPECT_THROW(proxy->set_upstream(-1), std::invalid_argument);
}

TEST(FaultProxyTest, PassForwardsLargePayloadsIntactBothWays) {
  TestServer server(TestServer::Kind::kEcho);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  constexpr size_t kSize = size_t{5} * 1024 * 1024;
  // Two connections at once, each its own random stream.
  std::vector<Fd> clients;
  std::vector<std::string> sent;
  for (int i = 0; i < 2; ++i) {
    clients.push_back(connect_to(proxy->port()));
    ASSERT_GE(clients.back().get(), 0);
    sent.push_back(random_bytes(kSize, 1234u + static_cast<uint32_t>(i)));
  }
  std::vector<std::thread> senders;
  std::vector<int> send_ok(clients.size(), 0);
  for (size_t i = 0; i < clients.size(); ++i) {
    senders.emplace_back([&, i] {
      // Uneven pieces so that reads and writes straddle every boundary.
      size_t off = 0;
      size_t piece = 1;
      bool ok = true;
      while (off < sent[i].size() && ok) {
        const size_t n = std::min(piece, sent[i].size() - off);
        ok = send_all(clients[i].get(), sent[i].substr(off, n));
        off += n;
        piece = piece * 3 % 100003 + 1;
      }
      send_ok[i] = ok ? 1 : 0;
    });
  }
  std::vector<std::string> got(clients.size());
  for (size_t i = 0; i < clients.size(); ++i) {
    EXPECT_EQ(recv_exact(clients[i].get(), kSize, &got[i], Clock::now() + 60s), Read::kOk);
  }
  for (auto& t : senders) t.join();
  for (size_t i = 0; i < clients.size(); ++i) {
    EXPECT_EQ(send_ok[i], 1);
    EXPECT_TRUE(got[i] == sent[i]) << "stream " << i << " altered";
  }
  EXPECT_EQ(proxy->accepted(), 2u);
  EXPECT_EQ(proxy->frames_dropped(), 0u);
}

TEST(FaultProxyTest, ArmedDropThatNeverMatchesLeavesFramesIntact) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  Fd client = frame_client(*proxy);
  ASSERT_GE(client.get(), 0);
  // Every reply frame is now held until complete and inspected, then released.
  proxy->drop_next_reply_containing(std::string("\x01NEVER-IN-THE-STREAM\x02"));
  std::mt19937 gen(99);
  std::string expected;
  std::string sent;
  for (int32_t xid = 1; xid <= 40; ++xid) {
    const std::string body = random_bytes(gen() % 150000, static_cast<uint32_t>(xid));
    sent += frame(request(xid, body));
    expected += frame(reply(xid, body));
  }
  std::thread sender([&] { send_all(client.get(), sent); });
  std::string got;
  EXPECT_EQ(recv_exact(client.get(), expected.size(), &got, Clock::now() + 60s), Read::kOk);
  sender.join();
  EXPECT_TRUE(got == expected);
  EXPECT_EQ(proxy->frames_dropped(), 0u);
  EXPECT_FALSE(proxy->wait_reply_dropped(0ms));
}

TEST(FaultProxyTest, HalfCloseIsPassedOnAfterTheData) {
  TestServer server(TestServer::Kind::kEcho);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  Fd client = connect_to(proxy->port());
  const std::string data = random_bytes(300000, 5);
  ASSERT_TRUE(send_all(client.get(), data));
  ASSERT_EQ(::shutdown(client.get(), SHUT_WR), 0);
  // The echo server sees the EOF only after all the data, echoes it all, then closes.
  std::string got;
  EXPECT_EQ(recv_exact(client.get(), data.size(), &got, Clock::now() + kSoon), Read::kOk);
  EXPECT_TRUE(got == data);
  EXPECT_EQ(wait_closed(client.get(), Clock::now() + kSoon), Read::kEof);
  EXPECT_TRUE(server.wait_closed(1, kSoon));
  EXPECT_TRUE(proxy->wait_live(0, kSoon));
}

// ---------------------------------------------------------------------------------------------
// Blackhole.

TEST(FaultProxyTest, BlackholeDropsBothWaysSilentlyAndHealResumes) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  Fd client = frame_client(*proxy);
  ASSERT_GE(client.get(), 0);
  expect_round_trip(client.get(), 1, "before");

  proxy->blackhole();
  EXPECT_EQ(proxy->mode(), ProxyMode::kBlackhole);
  // Client -> server: the request is swallowed; server -> client: so is a pushed frame.
  const std::string lost_request = frame(request(2, "lost request"));
  const std::string lost_event = frame(reply(-1, "lost event"));
  ASSERT_TRUE(send_all(client.get(), lost_request));
  server.push_to_all(lost_event);
  ASSERT_TRUE(wait_until(
      [&] { return proxy->bytes_discarded() == lost_request.size() + lost_event.size(); }, kSoon));
  EXPECT_TRUE(stays_silent(client.get(), kSilence));  // no byte, and no EOF/reset either
  EXPECT_EQ(server.received(), 1u);
  EXPECT_EQ(server.closed(), 0u);
  EXPECT_EQ(proxy->live(), 1u);

  proxy->heal();
  EXPECT_EQ(proxy->mode(), ProxyMode::kPass);
  server.push_to_all(frame(reply(-1, "event after heal")));
  auto event = read_reply(client.get(), Clock::now() + kSoon);
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->xid, -1);
  EXPECT_EQ(event->body, "event after heal");  // not "lost event": dropped bytes stay dropped
  // The next reply is for xid 3: request 2 never reached the server.
  expect_round_trip(client.get(), 3, "after");
  EXPECT_EQ(server.received(), 2u);
  EXPECT_EQ(proxy->frames_dropped(), 0u);  // blackholed bytes are not "dropped frames"
}

TEST(FaultProxyTest, HealResetDamagedResetsOnlyConnectionsThatLostBytes) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  Fd damaged = frame_client(*proxy);
  Fd idle = frame_client(*proxy);
  ASSERT_GE(damaged.get(), 0);
  ASSERT_GE(idle.get(), 0);
  proxy->blackhole();
  const std::string lost = frame(request(1, "lost"));
  ASSERT_TRUE(send_all(damaged.get(), lost));
  ASSERT_TRUE(wait_until([&] { return proxy->bytes_discarded() == lost.size(); }, kSoon));

  proxy->heal(Heal::kResetDamaged);
  EXPECT_EQ(proxy->live(), 1u);  // synchronous
  int err = 0;
  EXPECT_EQ(wait_closed(damaged.get(), Clock::now() + kSoon, &err), Read::kError);
  EXPECT_EQ(err, ECONNRESET);
  expect_round_trip(idle.get(), 2, "the idle connection resumes");
  EXPECT_EQ(server.received(), 1u);
}

TEST(FaultProxyTest, BlackholeAppliesToNewConnectionsAndHoldsCloses) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  proxy->blackhole();
  // A new connection is accepted (and connected upstream) but nothing crosses it.
  Fd client = connect_to(proxy->port());
  ASSERT_GE(client.get(), 0);
  ASSERT_TRUE(proxy->wait_accepted(1, kSoon));
  ASSERT_TRUE(server.wait_connections(1, kSoon));
  ASSERT_TRUE(send_all(client.get(), frame("hello")));
  ASSERT_TRUE(wait_until([&] { return proxy->bytes_discarded() == frame("hello").size(); }, kSoon));
  EXPECT_TRUE(stays_silent(client.get(), kSilence));

  // The client goes away: a partition does not pass the close on.
  client.reset();
  EXPECT_FALSE(server.wait_closed(1, kSilence));
  EXPECT_EQ(proxy->live(), 1u);
  // Healing passes the held close on.
  proxy->heal();
  EXPECT_TRUE(server.wait_closed(1, kSoon));
  EXPECT_TRUE(proxy->wait_live(0, kSoon));
}

TEST(FaultProxyTest, BlackholeDiscardsWhatWasAlreadyQueued) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  Fd client = frame_client(*proxy);
  ASSERT_GE(client.get(), 0);
  proxy->set_delay(std::chrono::milliseconds(60000));  // requests wait in the proxy
  const std::string queued = frame(request(1, "queued"));
  ASSERT_TRUE(send_all(client.get(), queued));
  ASSERT_TRUE(wait_until([&] { return proxy->in_flight() == queued.size(); }, kSoon));
  proxy->blackhole();
  EXPECT_EQ(proxy->in_flight(), 0u);
  EXPECT_EQ(proxy->bytes_discarded(), queued.size());
  proxy->set_delay(0ms);
  proxy->heal();
  // The queued request went with the partition: the server never sees it.
  expect_round_trip(client.get(), 2, "next");
  EXPECT_EQ(server.received(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Delay.

TEST(FaultProxyTest, DelayAppliesToBothDirectionsAndKeepsOrder) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  Fd client = frame_client(*proxy);
  ASSERT_GE(client.get(), 0);
  constexpr auto kDelay = 150ms;
  proxy->set_delay(kDelay);

  // A round trip crosses the proxy twice.
  auto start = Clock::now();
  expect_round_trip(client.get(), 1, "delayed");
  EXPECT_GE(Clock::now() - start, 2 * kDelay);

  // Server -> client alone.
  start = Clock::now();
  server.push_to_all(frame(reply(-1, "pushed")));
  auto event = read_reply(client.get(), Clock::now() + kSoon);
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->body, "pushed");
  EXPECT_GE(Clock::now() - start, kDelay);

  // Several requests in flight at once come back in order.
  std::string burst;
  for (int32_t xid = 10; xid < 20; ++xid) burst += frame(request(xid, "n" + std::to_string(xid)));
  ASSERT_TRUE(send_all(client.get(), burst));
  // Shrinking the delay must not let later chunks overtake earlier ones.
  proxy->set_delay(0ms);
  ASSERT_TRUE(send_all(client.get(), frame(request(20, "n20"))));
  for (int32_t xid = 10; xid <= 20; ++xid) {
    auto r = read_reply(client.get(), Clock::now() + kSoon);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->xid, xid);
    EXPECT_EQ(r->body, "n" + std::to_string(xid));
  }
}

// ---------------------------------------------------------------------------------------------
// Resets, refusal, upstream failure.

TEST(FaultProxyTest, ResetAllResetsEveryConnectionBothSides) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  Fd a = frame_client(*proxy);
  Fd b = frame_client(*proxy);
  ASSERT_GE(a.get(), 0);
  ASSERT_GE(b.get(), 0);
  EXPECT_EQ(proxy->live(), 2u);

  proxy->reset_all();
  EXPECT_EQ(proxy->live(), 0u);  // synchronous
  EXPECT_TRUE(proxy->connection_ids().empty());
  for (int fd : {a.get(), b.get()}) {
    int err = 0;
    const Read r = wait_closed(fd, Clock::now() + kSoon, &err);
    EXPECT_TRUE(r == Read::kEof || (r == Read::kError && err == ECONNRESET))
        << "read result " << static_cast<int>(r) << " errno " << err;
  }
  EXPECT_TRUE(server.wait_closed(2, kSoon));

  // The proxy itself keeps working.
  Fd c = frame_client(*proxy);
  ASSERT_GE(c.get(), 0);
  expect_round_trip(c.get(), 1, "still here");
  EXPECT_EQ(proxy->accepted(), 3u);
}

TEST(FaultProxyTest, RefuseNewResetsNewConnectionsOnly) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  Fd old_client = frame_client(*proxy);
  ASSERT_GE(old_client.get(), 0);

  proxy->refuse_new(true);
  Fd refused = connect_to(proxy->port());
  ASSERT_GE(refused.get(), 0);
  int err = 0;
  const Read r = wait_closed(refused.get(), Clock::now() + kSoon, &err);
  EXPECT_TRUE(r == Read::kEof || (r == Read::kError && err == ECONNRESET));
  EXPECT_EQ(proxy->refused(), 1u);
  EXPECT_EQ(proxy->accepted(), 1u);
  EXPECT_EQ(server.connections(), 1u);  // never forwarded upstream
  expect_round_trip(old_client.get(), 1, "existing connection unaffected");

  proxy->refuse_new(false);
  Fd fresh = frame_client(*proxy);
  ASSERT_GE(fresh.get(), 0);
  expect_round_trip(fresh.get(), 1, "accepted again");
  EXPECT_EQ(proxy->accepted(), 2u);
}

TEST(FaultProxyTest, UpstreamDownClosesClientAndSetUpstreamRedirects) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", unused_port());
  Fd client = connect_to(proxy->port());
  ASSERT_GE(client.get(), 0);
  int err = 0;
  const Read r = wait_closed(client.get(), Clock::now() + kSoon, &err);
  EXPECT_TRUE(r == Read::kEof || (r == Read::kError && err == ECONNRESET));
  EXPECT_TRUE(proxy->wait_live(0, kSoon));

  proxy->set_upstream(server.port());
  Fd fresh = frame_client(*proxy);
  ASSERT_GE(fresh.get(), 0);
  expect_round_trip(fresh.get(), 1, "moved");
}

TEST(FaultProxyTest, ServerCloseAndResetArePassedOnToTheClient) {
  int port = 0;
  Fd listener = listen_loopback(&port);
  ASSERT_GE(listener.get(), 0);
  auto proxy = FaultProxy::start("127.0.0.1", port);

  // The server closes after sending: the client gets the data, then EOF.
  Fd closing_client = connect_to(proxy->port());
  Fd closing_server(::accept(listener.get(), nullptr, nullptr));
  ASSERT_GE(closing_server.get(), 0);
  ASSERT_TRUE(send_all(closing_server.get(), "last words"));
  closing_server.reset();
  std::string got;
  EXPECT_EQ(recv_exact(closing_client.get(), 10, &got, Clock::now() + kSoon), Read::kOk);
  EXPECT_EQ(got, "last words");
  EXPECT_EQ(wait_closed(closing_client.get(), Clock::now() + kSoon), Read::kEof);

  // The server resets: so does the proxy, towards the client.
  Fd reset_client = connect_to(proxy->port());
  Fd reset_server(::accept(listener.get(), nullptr, nullptr));
  ASSERT_GE(reset_server.get(), 0);
  ASSERT_TRUE(send_all(reset_client.get(), "ping"));
  std::string ping;
  ASSERT_EQ(recv_exact(reset_server.get(), 4, &ping, Clock::now() + kSoon), Read::kOk);
  linger lg{1, 0};
  ASSERT_EQ(::setsockopt(reset_server.get(), SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
  reset_server.reset();
  int err = 0;
  EXPECT_EQ(wait_closed(reset_client.get(), Clock::now() + kSoon, &err), Read::kError);
  EXPECT_EQ(err, ECONNRESET);
  // The reset connection is gone; the closed one is only half-closed until its client closes.
  EXPECT_TRUE(proxy->wait_live(1, kSoon));
  closing_client.reset();
  EXPECT_TRUE(proxy->wait_live(0, kSoon));
}

// ---------------------------------------------------------------------------------------------
// Lost replies.

TEST(FaultProxyTest, DropNextReplyDropsExactlyTheMatchingFrame) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  EXPECT_FALSE(proxy->wait_reply_dropped(0ms));  // nothing armed
  proxy->drop_next_reply_containing("-lock-", /*reset_after=*/false);
  // The ConnectResponse contains the needle but is not a reply: not dropped.
  Fd client = frame_client(*proxy, "hello x-lock-");
  ASSERT_GE(client.get(), 0);
  // Neither is a reply that does not contain it.
  expect_round_trip(client.get(), 1, "plain");

  // Five frames in one segment: event and ping contain the needle but are not replies; only
  // "hit -lock-" goes.
  ASSERT_TRUE(send_all(client.get(), frame(request(2, "trio:-lock-"))));
  std::vector<Reply> got;
  for (int i = 0; i < 4; ++i) {
    auto r = read_reply(client.get(), Clock::now() + kSoon);
    ASSERT_TRUE(r.has_value()) << "frame " << i;
    got.push_back(*r);
  }
  EXPECT_EQ(got[0].xid, -1);
  EXPECT_EQ(got[0].body, "watch -lock-");
  EXPECT_EQ(got[1].xid, -2);
  EXPECT_EQ(got[1].body, "ping -lock-");
  EXPECT_EQ(got[2].xid, 2);
  EXPECT_EQ(got[2].body, "first");
  EXPECT_EQ(got[3].xid, 2);
  EXPECT_EQ(got[3].body, "last");
  EXPECT_TRUE(proxy->wait_reply_dropped(kSoon));
  EXPECT_EQ(proxy->frames_dropped(), 1u);

  // One-shot: the same reply passes next time, and the connection stayed up.
  ASSERT_TRUE(send_all(client.get(), frame(request(3, "trio:-lock-"))));
  for (const char* body : {"watch -lock-", "ping -lock-", "first", "hit -lock-", "last"}) {
    auto r = read_reply(client.get(), Clock::now() + kSoon);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->body, body);
  }
  EXPECT_EQ(proxy->frames_dropped(), 1u);
  EXPECT_EQ(proxy->live(), 1u);
}

TEST(FaultProxyTest, DropNextReplyWithResetLosesTheReplyAndTheConnection) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  Fd victim = frame_client(*proxy);
  Fd bystander = frame_client(*proxy);
  ASSERT_GE(victim.get(), 0);
  ASSERT_GE(bystander.get(), 0);

  proxy->drop_next_reply_containing("hit");
  ASSERT_TRUE(send_all(victim.get(), frame(request(5, "trio:x"))));
  // Frames before the dropped one arrive; then the connection is reset instead of "hit x".
  for (const char* body : {"watch x", "ping x", "first"}) {
    auto r = read_reply(victim.get(), Clock::now() + kSoon);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->body, body);
  }
  Read status = Read::kOk;
  auto next = read_reply(victim.get(), Clock::now() + kSoon, &status);
  EXPECT_FALSE(next.has_value()) << "got a frame after the dropped one: " << next->body;
  EXPECT_TRUE(status == Read::kEof || status == Read::kError) << static_cast<int>(status);
  EXPECT_TRUE(proxy->wait_reply_dropped(kSoon));
  EXPECT_EQ(proxy->frames_dropped(), 1u);
  EXPECT_EQ(server.received(), 1u);  // the request was executed
  EXPECT_TRUE(proxy->wait_live(1, kSoon));
  expect_round_trip(bystander.get(), 1, "hit but unaffected");  // one-shot, other connection
}

TEST(FaultProxyTest, DropWaitsForTheWholeFrameAcrossSegments) {
  // A server that dribbles a reply byte by byte: the proxy must hold the frame until it is
  // complete before deciding.
  int port = 0;
  Fd listener = listen_loopback(&port);
  auto proxy = FaultProxy::start("127.0.0.1", port);
  Fd client = connect_to(proxy->port());
  Fd upstream(::accept(listener.get(), nullptr, nullptr));
  ASSERT_GE(upstream.get(), 0);
  ASSERT_TRUE(send_all(upstream.get(), frame("connect response")));
  auto connect_response = read_frame(client.get(), Clock::now() + kSoon);
  ASSERT_TRUE(connect_response.has_value());

  proxy->drop_next_reply_containing("needle", /*reset_after=*/false);
  const std::string doomed = frame(reply(1, "....needle...."));
  const std::string kept = frame(reply(2, "needle-free? no: nee dle"));
  for (char c : doomed + kept) {
    ASSERT_TRUE(send_all(upstream.get(), std::string(1, c)));
  }
  auto r = read_reply(client.get(), Clock::now() + kSoon);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->xid, 2);
  EXPECT_EQ(r->body, "needle-free? no: nee dle");
  EXPECT_EQ(proxy->frames_dropped(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Per-connection control.

TEST(FaultProxyTest, PerConnectionControlAffectsOnlyThatConnection) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  Fd a = frame_client(*proxy);
  ASSERT_GE(a.get(), 0);
  Fd b = frame_client(*proxy);
  ASSERT_GE(b.get(), 0);
  const std::vector<int> ids = proxy->connection_ids();
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_LT(ids[0], ids[1]);  // oldest first: ids[0] is a
  const int id_a = ids[0];
  const int id_b = ids[1];

  ASSERT_TRUE(proxy->blackhole_connection(id_a));
  EXPECT_EQ(proxy->mode(), ProxyMode::kPass);
  const std::string void1 = frame(request(1, "into the void"));
  ASSERT_TRUE(send_all(a.get(), void1));
  expect_round_trip(b.get(), 1, "b passes");
  ASSERT_TRUE(wait_until([&] { return proxy->bytes_discarded() == void1.size(); }, kSoon));
  EXPECT_TRUE(stays_silent(a.get(), kSilence));

  // heal_connection does not override a whole-proxy blackhole.
  proxy->blackhole();
  ASSERT_TRUE(proxy->heal_connection(id_a));
  const std::string void2 = frame(request(2, "still void"));
  ASSERT_TRUE(send_all(a.get(), void2));
  ASSERT_TRUE(
      wait_until([&] { return proxy->bytes_discarded() == void1.size() + void2.size(); }, kSoon));
  EXPECT_TRUE(stays_silent(a.get(), kSilence));
  proxy->heal();
  expect_round_trip(a.get(), 3, "a passes again");
  EXPECT_EQ(server.received(), 2u);  // b's 1 and a's 3

  ASSERT_TRUE(proxy->reset_connection(id_b));
  int err = 0;
  const Read r = wait_closed(b.get(), Clock::now() + kSoon, &err);
  EXPECT_TRUE(r == Read::kEof || (r == Read::kError && err == ECONNRESET));
  EXPECT_EQ(proxy->connection_ids(), std::vector<int>{id_a});
  expect_round_trip(a.get(), 4, "a survives b's reset");

  EXPECT_FALSE(proxy->blackhole_connection(id_b));
  EXPECT_FALSE(proxy->heal_connection(id_b));
  EXPECT_FALSE(proxy->reset_connection(id_b));
  EXPECT_FALSE(proxy->reset_connection(12345));
}

TEST(FaultProxyTest, DestructorClosesEverything) {
  TestServer server(TestServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  Fd client = frame_client(*proxy);
  ASSERT_GE(client.get(), 0);
  proxy->blackhole();  // even a partition ends with the proxy
  const int port = proxy->port();
  proxy.reset();
  EXPECT_NE(wait_closed(client.get(), Clock::now() + kSoon), Read::kTimeout);
  EXPECT_TRUE(server.wait_closed(1, kSoon));
  Fd again = connect_to(port);
  EXPECT_LT(again.get(), 0);  // nobody listens any more
}

// ---------------------------------------------------------------------------------------------
// Against a real ZooKeeper server, with the C client.

#if defined(THREADED)

// A ZooKeeper C client handle whose session state can be waited on.
class ZkClient {
 public:
  ZkClient(const std::string& hosts, int session_timeout_ms) {
    zh_ = ::zookeeper_init(hosts.c_str(), &ZkClient::watcher, session_timeout_ms, nullptr, this, 0);
  }
  ~ZkClient() {
    if (zh_ != nullptr) ::zookeeper_close(zh_);
  }
  ZkClient(const ZkClient&) = delete;
  ZkClient& operator=(const ZkClient&) = delete;

  zhandle_t* handle() const { return zh_; }
  int64_t session_id() const { return ::zoo_client_id(zh_)->client_id; }

  // Waits until the last session event's state satisfies pred.
  bool wait_state(const std::function<bool(int)>& pred, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return pred(state_); });
  }
  bool wait_connected(std::chrono::milliseconds timeout) {
    return wait_state([](int s) { return s == ZOO_CONNECTED_STATE; }, timeout);
  }

 private:
  static void watcher(zhandle_t*, int type, int state, const char*, void* context) {
    if (type != ZOO_SESSION_EVENT) return;
    auto* self = static_cast<ZkClient*>(context);
    std::lock_guard<std::mutex> lock(self->mu_);
    self->state_ = state;
    self->cv_.notify_all();
  }

  zhandle_t* zh_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  int state_ = 0;
};

class FaultProxyZooKeeperTest : public ::testing::Test {
 protected:
  // The process's shared server (tests/support/zk_server.h): started on first use, or the one
  // ZKLOCK_TEST_CONNECT names.
  static void SetUpTestSuite() { ::zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR); }
  void SetUp() override { server_ = shared_server(); }

  // Creates `path` (persistent) directly on the server, ignoring "already exists".
  static void ensure_node(const std::string& path) {
    ZkClient direct(server_.connect, 10000);
    ASSERT_TRUE(direct.wait_connected(kSoon));
    const int rc = ::zoo_create(direct.handle(), path.c_str(), nullptr, -1, &ZOO_OPEN_ACL_UNSAFE, 0,
                                nullptr, 0);
    ASSERT_TRUE(rc == ZOK || rc == ZNODEEXISTS) << ::zerror(rc);
  }

  static ServerRef server_;
};

ServerRef FaultProxyZooKeeperTest::server_;

TEST_F(FaultProxyZooKeeperTest, BlackholeDisconnectsAndHealReconnectsSameSession) {
  auto proxy = FaultProxy::start("127.0.0.1", server_.port);
  const int kSessionMs = 6000;
  ZkClient client(proxy->connect_string(), kSessionMs);
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
  const std::string parent = "/fault-proxy-drop-" + std::to_string(::getpid());
  ensure_node(parent);
  auto proxy = FaultProxy::start("127.0.0.1", server_.port);
  ZkClient client(proxy->connect_string(), 6000);
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
  const std::string parent = "/fault-proxy-expire-" + std::to_string(::getpid());
  ensure_node(parent);
  auto proxy = FaultProxy::start("127.0.0.1", server_.port);
  ZkClient victim(proxy->connect_string(), 2000);
  ASSERT_TRUE(victim.wait_connected(kSoon));
  const std::string node = parent + "/held";
  ASSERT_EQ(::zoo_create(victim.handle(), node.c_str(), nullptr, -1, &ZOO_OPEN_ACL_UNSAFE,
                         ZOO_EPHEMERAL, nullptr, 0),
            ZOK);
  ZkClient observer(server_.connect, 10000);  // direct, not through the proxy
  ASSERT_TRUE(observer.wait_connected(kSoon));

  proxy->blackhole();
  // The server expires the victim's session and deletes its ephemeral node.
  const auto deadline = Clock::now() + 20s;
  int rc = ZOK;
  while ((rc = ::zoo_exists(observer.handle(), node.c_str(), 0, nullptr)) == ZOK &&
         Clock::now() < deadline) {
    ::poll(nullptr, 0, 50);
  }
  EXPECT_EQ(rc, ZNONODE);
  proxy->heal();
  EXPECT_TRUE(victim.wait_state([](int s) { return s == ZOO_EXPIRED_SESSION_STATE; }, kSoon));
}

#else  // !THREADED

TEST(FaultProxyZooKeeperTest, NeedsTheZooKeeperCClient) {
  GTEST_SKIP() << "built without THREADED / libzookeeper_mt: link fault_proxy_test against "
                  "ZooKeeper::zookeeper_mt to run the real-server tests";
}

#endif

}  // namespace
}  // namespace zklock::testing
