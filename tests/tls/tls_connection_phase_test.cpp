// TLS handshakes under the C client, white box (ClientConnection). How a connection's phase reads
// while it waits: the C client's SSL_CONNECTING state covers both the TCP connect and the TLS
// handshake, and the Lost rule must tell them apart. A connect whose SYN gets no answer is
// kConnecting - a forced reconnect cuts it after the reconnect interval (150 ms), as over plain
// TCP, so that a fresh SYN goes out soon after a network blip heals instead of at the kernel's
// next retransmission, 1, 3 or 7 s later. A TCP connection whose handshake waits on a silent peer
// is kAssociating - given suspend_after, since a server just back may answer a handshake slowly.
// Between two attempts the C client may still say SSL_CONNECTING with no socket left: that is
// connecting too. And closing one handle, which cuts its own silent handshake (the C client would
// wait for it forever), leaves the handshakes of the process's other handles alone.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "client/client_connection.h"
#include "client/log_router.h"
#include "client/tls.h"
#include "deferring_listener.h"
#include "support/socket_io.h"
#include "support/test_pki.h"
#include "support/wait.h"

namespace zklock::detail {
namespace {

using namespace std::chrono_literals;
using testing::wait_until;

std::string tls_settings() {
  const testing::ClientCertificate c = testing::test_pki().client("intruder");  // no password
  TlsOptions tls;
  tls.ca_file = c.ca_file;
  tls.cert_file = c.cert_file;
  tls.key_file = c.key_file;
  return checked_tls_settings(tls);
}

// Polls phase() for `window` and returns every phase seen.
std::vector<ConnectionPhase> phases_seen(const ClientConnection& connection,
                                         std::chrono::milliseconds window) {
  std::vector<ConnectionPhase> seen;
  wait_until(
      [&] {
        const ConnectionPhase p = connection.phase();
        if (seen.empty() || seen.back() != p) seen.push_back(p);
        return false;
      },
      window, 5ms);
  return seen;
}

// The rule itself, by TCP state. No socket must not read as a handshake: after a forced drop
// the monitor looks while the C client cleans the failed attempt up (socket closed, state not yet
// reset), and a handshake phase then put the next cut off by suspend_after - a fresh SYN a
// second apart instead of every 150 ms, which lost 0.75 T blips over TLS.
TEST(TlsConnectionPhaseTest, OnlyAnEstablishedConnectionIsAHandshakeUnderWay) {
  constexpr int kNoSocket = -1, kEstablished = 1, kSynSent = 2, kClose = 7, kCloseWait = 8;
  EXPECT_EQ(ssl_connecting_phase(kEstablished), ConnectionPhase::kAssociating);
  for (int state : {kNoSocket, kSynSent, kClose, kCloseWait}) {
    EXPECT_EQ(ssl_connecting_phase(state), ConnectionPhase::kConnecting) << "TCP state " << state;
  }
}

TEST(TlsConnectionPhaseTest, AConnectWhoseSynGetsNoAnswerIsConnecting) {
  // The kernel drops every SYN: the connect waits.
  int port = 0;
  testing::UniqueFd filler;
  const testing::UniqueFd server = testing::listen_dropping_syns(&port, &filler);
  ASSERT_TRUE(server.valid());
  LogSlot slot([](LogLevel, std::string_view) {}, LogLevel::kError);
  DeferringListener listener;
  {
    ClientConnection connection("127.0.0.1:" + std::to_string(port), 30s, 1, listener,
                                slot.callback(), nullptr, nullptr, tls_settings());
    ASSERT_TRUE(connection.encrypted());
    const auto seen = phases_seen(connection, 1500ms);
    EXPECT_EQ(seen, std::vector<ConnectionPhase>{ConnectionPhase::kConnecting})
        << "a connect without an answer must read as connecting, never as a handshake";
  }
  listener.run_deferred();
}

TEST(TlsConnectionPhaseTest, AHandshakeWithASilentPeerIsAssociating) {
  // The kernel accepts; nobody ever reads or answers.
  int port = 0;
  const testing::UniqueFd server = testing::listen_loopback(&port);
  ASSERT_TRUE(server.valid());
  LogSlot slot([](LogLevel, std::string_view) {}, LogLevel::kError);
  DeferringListener listener;
  {
    ClientConnection connection("127.0.0.1:" + std::to_string(port), 30s, 1, listener,
                                slot.callback(), nullptr, nullptr, tls_settings());
    EXPECT_TRUE(
        wait_until([&] { return connection.phase() == ConnectionPhase::kAssociating; }, 5s, 5ms))
        << "a TLS handshake under way must read as associating";
  }
  listener.run_deferred();
}

TEST(TlsConnectionPhaseTest, ClosingOneHandleLeavesAnotherHandlesHandshakeAlone) {
  // The kernel accepts; nobody answers: both handshakes wait, as with a slow server.
  int port = 0;
  const testing::UniqueFd server = testing::listen_loopback(&port);
  ASSERT_TRUE(server.valid());
  const std::string hosts = "127.0.0.1:" + std::to_string(port);
  LogSlot slot([](LogLevel, std::string_view) {}, LogLevel::kError);
  DeferringListener listener;
  {
    ClientConnection waiting(hosts, 30s, 1, listener, slot.callback(), nullptr, nullptr,
                             tls_settings());
    ASSERT_TRUE(
        wait_until([&] { return waiting.phase() == ConnectionPhase::kAssociating; }, 5s, 5ms));
    const int first = ::accept4(server.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    ASSERT_GE(first, 0);
    {
      ClientConnection closing(hosts, 30s, 1, listener, slot.callback(), nullptr, nullptr,
                               tls_settings());
      ASSERT_TRUE(
          wait_until([&] { return closing.phase() == ConnectionPhase::kAssociating; }, 5s, 5ms));
    }  // closed: its own handshake is cut, or the close would never return
    listener.run_deferred();
    // The first handshake goes on: its socket was not shut down (the server would read an EOF
    // after its ClientHello) and it did not reconnect.
    std::array<char, 4096> buffer{};
    ssize_t n = 0;
    while ((n = ::read(first, buffer.data(), buffer.size())) > 0) {
    }
    EXPECT_NE(n, 0) << "closing one handle shut down another's handshake";
    EXPECT_EQ(waiting.phase(), ConnectionPhase::kAssociating);
    ::close(first);
  }
  listener.run_deferred();
}

}  // namespace
}  // namespace zklock::detail
