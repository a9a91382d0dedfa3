// tests/support/tests/fault_proxy_test.cpp: the TCP fault proxy (support/fault_proxy.h) in front
// of fake servers (support/fake_server.h): a raw byte echo server and a "frame server" that speaks
// ZooKeeper's framing, so that every byte, frame and close the proxy passes on - or must not - is
// known. fault_proxy_zookeeper_test.cpp puts it in front of a real server.
//
// Waits are bounded by deadlines; the only fixed-length waits are "nothing arrives for N ms"
// windows that check an absence, and every timing assertion is a lower bound.
#include "support/fault_proxy.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/fake_server.h"
#include "support/socket_io.h"
#include "support/unique_fd.h"
#include "support/wait.h"
#include "support/zk_framing.h"
#include "support/zk_server.h"

namespace zklock::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kSoon = 10s;       // upper bound for anything that should happen "soon"
constexpr auto kSilence = 300ms;  // window in which something must NOT happen

// Bytes that are not text, different for every seed.
std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 4) {
    const uint32_t word = gen();
    std::memcpy(&s[i], &word, std::min<size_t>(4, n - i));
  }
  return s;
}

// A client of the frame server through the proxy: connects and does the connect handshake.
UniqueFd frame_client(const FaultProxy& proxy, const std::string& hello = "hello") {
  UniqueFd fd = connect_loopback(proxy.port());
  if (fd.get() < 0) return fd;
  if (!send_all(fd.get(), frame(hello))) return UniqueFd();
  auto resp = read_frame(fd.get(), Clock::now() + kSoon);
  if (!resp || *resp != "CONNECTED:" + hello) return UniqueFd();
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

// The tests whose upstream is a frame server: it and the proxy in front of it.
class FaultProxyFramesTest : public ::testing::Test {
 protected:
  FakeServer server_{FakeServer::Kind::kFrames};
  std::unique_ptr<FaultProxy> proxy_ = FaultProxy::start("127.0.0.1", server_.port());
};

// ---------------------------------------------------------------------------------------------
// Pass mode.

TEST(FaultProxyTest, StartsOnLoopbackAndRejectsBadPorts) {
  FakeServer server(FakeServer::Kind::kEcho);
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
  FakeServer server(FakeServer::Kind::kEcho);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  constexpr size_t kSize = size_t{5} * 1024 * 1024;
  // Two connections at once, each its own random stream.
  std::vector<UniqueFd> clients;
  std::vector<std::string> sent;
  for (int i = 0; i < 2; ++i) {
    clients.push_back(connect_loopback(proxy->port()));
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
    EXPECT_EQ(recv_exact(clients[i].get(), kSize, &got[i], Clock::now() + 60s), ReadResult::kOk);
  }
  for (auto& t : senders) t.join();
  for (size_t i = 0; i < clients.size(); ++i) {
    EXPECT_EQ(send_ok[i], 1);
    EXPECT_TRUE(got[i] == sent[i]) << "stream " << i << " altered";
  }
  EXPECT_EQ(proxy->accepted(), 2u);
  EXPECT_EQ(proxy->frames_dropped(), 0u);
}

TEST_F(FaultProxyFramesTest, ArmedDropThatNeverMatchesLeavesFramesIntact) {
  UniqueFd client = frame_client(*proxy_);
  ASSERT_GE(client.get(), 0);
  // Every reply frame is now held until complete and inspected, then released.
  proxy_->drop_next_reply_containing(std::string("\x01NEVER-IN-THE-STREAM\x02"));
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
  EXPECT_EQ(recv_exact(client.get(), expected.size(), &got, Clock::now() + 60s), ReadResult::kOk);
  sender.join();
  EXPECT_TRUE(got == expected);
  EXPECT_EQ(proxy_->frames_dropped(), 0u);
  EXPECT_FALSE(proxy_->wait_reply_dropped(0ms));
}

TEST(FaultProxyTest, HalfCloseIsPassedOnAfterTheData) {
  FakeServer server(FakeServer::Kind::kEcho);
  auto proxy = FaultProxy::start("127.0.0.1", server.port());
  UniqueFd client = connect_loopback(proxy->port());
  const std::string data = random_bytes(300000, 5);
  ASSERT_TRUE(send_all(client.get(), data));
  ASSERT_EQ(::shutdown(client.get(), SHUT_WR), 0);
  // The echo server sees the EOF only after all the data, echoes it all, then closes.
  std::string got;
  EXPECT_EQ(recv_exact(client.get(), data.size(), &got, Clock::now() + kSoon), ReadResult::kOk);
  EXPECT_TRUE(got == data);
  EXPECT_EQ(wait_closed(client.get(), Clock::now() + kSoon), ReadResult::kEof);
  EXPECT_TRUE(server.wait_closed(1, kSoon));
  EXPECT_TRUE(proxy->wait_live(0, kSoon));
}

// ---------------------------------------------------------------------------------------------
// Blackhole.

TEST_F(FaultProxyFramesTest, BlackholeDropsBothWaysSilentlyAndHealResumes) {
  UniqueFd client = frame_client(*proxy_);
  ASSERT_GE(client.get(), 0);
  expect_round_trip(client.get(), 1, "before");

  proxy_->blackhole();
  EXPECT_EQ(proxy_->mode(), ProxyMode::kBlackhole);
  // Client -> server: the request is swallowed; server -> client: so is a pushed frame.
  const std::string lost_request = frame(request(2, "lost request"));
  const std::string lost_event = frame(reply(-1, "lost event"));
  ASSERT_TRUE(send_all(client.get(), lost_request));
  server_.push_to_all(lost_event);
  ASSERT_TRUE(wait_until(
      [&] { return proxy_->bytes_discarded() == lost_request.size() + lost_event.size(); }, kSoon));
  EXPECT_TRUE(stays_silent(client.get(), kSilence));  // no byte, and no EOF/reset either
  EXPECT_EQ(server_.received(), 1u);
  EXPECT_EQ(server_.closed(), 0u);
  EXPECT_EQ(proxy_->live(), 1u);

  proxy_->heal();
  EXPECT_EQ(proxy_->mode(), ProxyMode::kPass);
  server_.push_to_all(frame(reply(-1, "event after heal")));
  auto event = read_reply(client.get(), Clock::now() + kSoon);
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->xid, -1);
  EXPECT_EQ(event->body, "event after heal");  // not "lost event": dropped bytes stay dropped
  // The next reply is for xid 3: request 2 never reached the server_.
  expect_round_trip(client.get(), 3, "after");
  EXPECT_EQ(server_.received(), 2u);
  EXPECT_EQ(proxy_->frames_dropped(), 0u);  // blackholed bytes are not "dropped frames"
}

TEST_F(FaultProxyFramesTest, HealResetDamagedResetsOnlyConnectionsThatLostBytes) {
  UniqueFd damaged = frame_client(*proxy_);
  UniqueFd idle = frame_client(*proxy_);
  ASSERT_GE(damaged.get(), 0);
  ASSERT_GE(idle.get(), 0);
  proxy_->blackhole();
  const std::string lost = frame(request(1, "lost"));
  ASSERT_TRUE(send_all(damaged.get(), lost));
  ASSERT_TRUE(wait_until([&] { return proxy_->bytes_discarded() == lost.size(); }, kSoon));

  proxy_->heal(Heal::kResetDamaged);
  EXPECT_EQ(proxy_->live(), 1u);  // synchronous
  int err = 0;
  EXPECT_EQ(wait_closed(damaged.get(), Clock::now() + kSoon, &err), ReadResult::kError);
  EXPECT_EQ(err, ECONNRESET);
  expect_round_trip(idle.get(), 2, "the idle connection resumes");
  EXPECT_EQ(server_.received(), 1u);
}

TEST_F(FaultProxyFramesTest, BlackholeAppliesToNewConnectionsAndHoldsCloses) {
  proxy_->blackhole();
  // A new connection is accepted (and connected upstream) but nothing crosses it.
  UniqueFd client = connect_loopback(proxy_->port());
  ASSERT_GE(client.get(), 0);
  ASSERT_TRUE(proxy_->wait_accepted(1, kSoon));
  ASSERT_TRUE(server_.wait_connections(1, kSoon));
  ASSERT_TRUE(send_all(client.get(), frame("hello")));
  ASSERT_TRUE(
      wait_until([&] { return proxy_->bytes_discarded() == frame("hello").size(); }, kSoon));
  EXPECT_TRUE(stays_silent(client.get(), kSilence));

  // The client goes away: a partition does not pass the close on.
  client.reset();
  EXPECT_FALSE(server_.wait_closed(1, kSilence));
  EXPECT_EQ(proxy_->live(), 1u);
  // Healing passes the held close on.
  proxy_->heal();
  EXPECT_TRUE(server_.wait_closed(1, kSoon));
  EXPECT_TRUE(proxy_->wait_live(0, kSoon));
}

TEST_F(FaultProxyFramesTest, BlackholeDiscardsWhatWasAlreadyQueued) {
  UniqueFd client = frame_client(*proxy_);
  ASSERT_GE(client.get(), 0);
  proxy_->set_delay(std::chrono::milliseconds(60000));  // requests wait in the proxy
  const std::string queued = frame(request(1, "queued"));
  ASSERT_TRUE(send_all(client.get(), queued));
  ASSERT_TRUE(wait_until([&] { return proxy_->in_flight() == queued.size(); }, kSoon));
  proxy_->blackhole();
  EXPECT_EQ(proxy_->in_flight(), 0u);
  EXPECT_EQ(proxy_->bytes_discarded(), queued.size());
  proxy_->set_delay(0ms);
  proxy_->heal();
  // The queued request went with the partition: the server never sees it.
  expect_round_trip(client.get(), 2, "next");
  EXPECT_EQ(server_.received(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Delay.

TEST_F(FaultProxyFramesTest, DelayAppliesToBothDirectionsAndKeepsOrder) {
  UniqueFd client = frame_client(*proxy_);
  ASSERT_GE(client.get(), 0);
  constexpr auto kDelay = 150ms;
  proxy_->set_delay(kDelay);

  // A round trip crosses the proxy twice.
  auto start = Clock::now();
  expect_round_trip(client.get(), 1, "delayed");
  EXPECT_GE(Clock::now() - start, 2 * kDelay);

  // Server -> client alone.
  start = Clock::now();
  server_.push_to_all(frame(reply(-1, "pushed")));
  auto event = read_reply(client.get(), Clock::now() + kSoon);
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->body, "pushed");
  EXPECT_GE(Clock::now() - start, kDelay);

  // Several requests in flight at once come back in order.
  std::string burst;
  for (int32_t xid = 10; xid < 20; ++xid) burst += frame(request(xid, "n" + std::to_string(xid)));
  ASSERT_TRUE(send_all(client.get(), burst));
  // Shrinking the delay must not let later chunks overtake earlier ones.
  proxy_->set_delay(0ms);
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

TEST_F(FaultProxyFramesTest, ResetAllResetsEveryConnectionBothSides) {
  UniqueFd a = frame_client(*proxy_);
  UniqueFd b = frame_client(*proxy_);
  ASSERT_GE(a.get(), 0);
  ASSERT_GE(b.get(), 0);
  EXPECT_EQ(proxy_->live(), 2u);

  proxy_->reset_all();
  EXPECT_EQ(proxy_->live(), 0u);  // synchronous
  EXPECT_TRUE(proxy_->connection_ids().empty());
  for (int fd : {a.get(), b.get()}) {
    int err = 0;
    const ReadResult r = wait_closed(fd, Clock::now() + kSoon, &err);
    EXPECT_TRUE(r == ReadResult::kEof || (r == ReadResult::kError && err == ECONNRESET))
        << "read result " << static_cast<int>(r) << " errno " << err;
  }
  EXPECT_TRUE(server_.wait_closed(2, kSoon));

  // The proxy itself keeps working.
  UniqueFd c = frame_client(*proxy_);
  ASSERT_GE(c.get(), 0);
  expect_round_trip(c.get(), 1, "still here");
  EXPECT_EQ(proxy_->accepted(), 3u);
}

TEST_F(FaultProxyFramesTest, RefuseNewResetsNewConnectionsOnly) {
  UniqueFd old_client = frame_client(*proxy_);
  ASSERT_GE(old_client.get(), 0);

  proxy_->refuse_new(true);
  UniqueFd refused = connect_loopback(proxy_->port());
  ASSERT_GE(refused.get(), 0);
  int err = 0;
  const ReadResult r = wait_closed(refused.get(), Clock::now() + kSoon, &err);
  EXPECT_TRUE(r == ReadResult::kEof || (r == ReadResult::kError && err == ECONNRESET));
  EXPECT_EQ(proxy_->refused(), 1u);
  EXPECT_EQ(proxy_->accepted(), 1u);
  EXPECT_EQ(server_.connections(), 1u);  // never forwarded upstream
  expect_round_trip(old_client.get(), 1, "existing connection unaffected");

  proxy_->refuse_new(false);
  UniqueFd fresh = frame_client(*proxy_);
  ASSERT_GE(fresh.get(), 0);
  expect_round_trip(fresh.get(), 1, "accepted again");
  EXPECT_EQ(proxy_->accepted(), 2u);
}

TEST(FaultProxyTest, UpstreamDownClosesClientAndSetUpstreamRedirects) {
  FakeServer server(FakeServer::Kind::kFrames);
  auto proxy = FaultProxy::start("127.0.0.1", pick_free_port());
  UniqueFd client = connect_loopback(proxy->port());
  ASSERT_GE(client.get(), 0);
  int err = 0;
  const ReadResult r = wait_closed(client.get(), Clock::now() + kSoon, &err);
  EXPECT_TRUE(r == ReadResult::kEof || (r == ReadResult::kError && err == ECONNRESET));
  EXPECT_TRUE(proxy->wait_live(0, kSoon));

  proxy->set_upstream(server.port());
  UniqueFd fresh = frame_client(*proxy);
  ASSERT_GE(fresh.get(), 0);
  expect_round_trip(fresh.get(), 1, "moved");
}

TEST(FaultProxyTest, ServerCloseAndResetArePassedOnToTheClient) {
  int port = 0;
  UniqueFd listener = listen_loopback(&port);
  ASSERT_GE(listener.get(), 0);
  auto proxy = FaultProxy::start("127.0.0.1", port);

  // The server closes after sending: the client gets the data, then EOF.
  UniqueFd closing_client = connect_loopback(proxy->port());
  UniqueFd closing_server(::accept(listener.get(), nullptr, nullptr));
  ASSERT_GE(closing_server.get(), 0);
  ASSERT_TRUE(send_all(closing_server.get(), "last words"));
  closing_server.reset();
  std::string got;
  EXPECT_EQ(recv_exact(closing_client.get(), 10, &got, Clock::now() + kSoon), ReadResult::kOk);
  EXPECT_EQ(got, "last words");
  EXPECT_EQ(wait_closed(closing_client.get(), Clock::now() + kSoon), ReadResult::kEof);

  // The server resets: so does the proxy, towards the client.
  UniqueFd reset_client = connect_loopback(proxy->port());
  UniqueFd reset_server(::accept(listener.get(), nullptr, nullptr));
  ASSERT_GE(reset_server.get(), 0);
  ASSERT_TRUE(send_all(reset_client.get(), "ping"));
  std::string ping;
  ASSERT_EQ(recv_exact(reset_server.get(), 4, &ping, Clock::now() + kSoon), ReadResult::kOk);
  linger lg{1, 0};
  ASSERT_EQ(::setsockopt(reset_server.get(), SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
  reset_server.reset();
  int err = 0;
  EXPECT_EQ(wait_closed(reset_client.get(), Clock::now() + kSoon, &err), ReadResult::kError);
  EXPECT_EQ(err, ECONNRESET);
  // The reset connection is gone; the closed one is only half-closed until its client closes.
  EXPECT_TRUE(proxy->wait_live(1, kSoon));
  closing_client.reset();
  EXPECT_TRUE(proxy->wait_live(0, kSoon));
}

// ---------------------------------------------------------------------------------------------
// Lost replies.

TEST_F(FaultProxyFramesTest, DropNextReplyDropsExactlyTheMatchingFrame) {
  EXPECT_FALSE(proxy_->wait_reply_dropped(0ms));  // nothing armed
  proxy_->drop_next_reply_containing("-lock-", /*reset_after=*/false);
  // The ConnectResponse contains the needle but is not a reply: not dropped.
  UniqueFd client = frame_client(*proxy_, "hello x-lock-");
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
  EXPECT_TRUE(proxy_->wait_reply_dropped(kSoon));
  EXPECT_EQ(proxy_->frames_dropped(), 1u);

  // One-shot: the same reply passes next time, and the connection stayed up.
  ASSERT_TRUE(send_all(client.get(), frame(request(3, "trio:-lock-"))));
  for (const char* body : {"watch -lock-", "ping -lock-", "first", "hit -lock-", "last"}) {
    auto r = read_reply(client.get(), Clock::now() + kSoon);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->body, body);
  }
  EXPECT_EQ(proxy_->frames_dropped(), 1u);
  EXPECT_EQ(proxy_->live(), 1u);
}

TEST_F(FaultProxyFramesTest, DropNextReplyWithResetLosesTheReplyAndTheConnection) {
  UniqueFd victim = frame_client(*proxy_);
  UniqueFd bystander = frame_client(*proxy_);
  ASSERT_GE(victim.get(), 0);
  ASSERT_GE(bystander.get(), 0);

  proxy_->drop_next_reply_containing("hit");
  ASSERT_TRUE(send_all(victim.get(), frame(request(5, "trio:x"))));
  // Frames before the dropped one arrive; then the connection is reset instead of "hit x".
  for (const char* body : {"watch x", "ping x", "first"}) {
    auto r = read_reply(victim.get(), Clock::now() + kSoon);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->body, body);
  }
  ReadResult status = ReadResult::kOk;
  auto next = read_reply(victim.get(), Clock::now() + kSoon, &status);
  EXPECT_FALSE(next.has_value()) << "got a frame after the dropped one: " << next->body;
  EXPECT_TRUE(status == ReadResult::kEof || status == ReadResult::kError)
      << static_cast<int>(status);
  EXPECT_TRUE(proxy_->wait_reply_dropped(kSoon));
  EXPECT_EQ(proxy_->frames_dropped(), 1u);
  EXPECT_EQ(server_.received(), 1u);  // the request was executed
  EXPECT_TRUE(proxy_->wait_live(1, kSoon));
  expect_round_trip(bystander.get(), 1, "hit but unaffected");  // one-shot, other connection
}

TEST(FaultProxyTest, DropWaitsForTheWholeFrameAcrossSegments) {
  // A server that dribbles a reply byte by byte: the proxy must hold the frame until it is
  // complete before deciding.
  int port = 0;
  UniqueFd listener = listen_loopback(&port);
  auto proxy = FaultProxy::start("127.0.0.1", port);
  UniqueFd client = connect_loopback(proxy->port());
  UniqueFd upstream(::accept(listener.get(), nullptr, nullptr));
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

TEST_F(FaultProxyFramesTest, PerConnectionControlAffectsOnlyThatConnection) {
  UniqueFd a = frame_client(*proxy_);
  ASSERT_GE(a.get(), 0);
  UniqueFd b = frame_client(*proxy_);
  ASSERT_GE(b.get(), 0);
  const std::vector<int> ids = proxy_->connection_ids();
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_LT(ids[0], ids[1]);  // oldest first: ids[0] is a
  const int id_a = ids[0];
  const int id_b = ids[1];

  ASSERT_TRUE(proxy_->blackhole_connection(id_a));
  EXPECT_EQ(proxy_->mode(), ProxyMode::kPass);
  const std::string void1 = frame(request(1, "into the void"));
  ASSERT_TRUE(send_all(a.get(), void1));
  expect_round_trip(b.get(), 1, "b passes");
  ASSERT_TRUE(wait_until([&] { return proxy_->bytes_discarded() == void1.size(); }, kSoon));
  EXPECT_TRUE(stays_silent(a.get(), kSilence));

  // heal_connection does not override a whole-proxy blackhole.
  proxy_->blackhole();
  ASSERT_TRUE(proxy_->heal_connection(id_a));
  const std::string void2 = frame(request(2, "still void"));
  ASSERT_TRUE(send_all(a.get(), void2));
  ASSERT_TRUE(
      wait_until([&] { return proxy_->bytes_discarded() == void1.size() + void2.size(); }, kSoon));
  EXPECT_TRUE(stays_silent(a.get(), kSilence));
  proxy_->heal();
  expect_round_trip(a.get(), 3, "a passes again");
  EXPECT_EQ(server_.received(), 2u);  // b's 1 and a's 3

  ASSERT_TRUE(proxy_->reset_connection(id_b));
  int err = 0;
  const ReadResult r = wait_closed(b.get(), Clock::now() + kSoon, &err);
  EXPECT_TRUE(r == ReadResult::kEof || (r == ReadResult::kError && err == ECONNRESET));
  EXPECT_EQ(proxy_->connection_ids(), std::vector<int>{id_a});
  expect_round_trip(a.get(), 4, "a survives b's reset");

  EXPECT_FALSE(proxy_->blackhole_connection(id_b));
  EXPECT_FALSE(proxy_->heal_connection(id_b));
  EXPECT_FALSE(proxy_->reset_connection(id_b));
  EXPECT_FALSE(proxy_->reset_connection(12345));
}

TEST_F(FaultProxyFramesTest, DestructorClosesEverything) {
  UniqueFd client = frame_client(*proxy_);
  ASSERT_GE(client.get(), 0);
  proxy_->blackhole();  // even a partition ends with the proxy
  const int port = proxy_->port();
  proxy_.reset();
  EXPECT_NE(wait_closed(client.get(), Clock::now() + kSoon), ReadResult::kTimeout);
  EXPECT_TRUE(server_.wait_closed(1, kSoon));
  UniqueFd again = connect_loopback(port);
  EXPECT_LT(again.get(), 0);  // nobody listens any more
}

}  // namespace
}  // namespace zklock::testing
