// The C client's server-list update, called between two connection attempts, must not make it
// read freed memory (src/client/log_router.cpp).
//
// The 3.8 C client formats its "Delaying connection after exhaustively trying all servers [%s]"
// warning from its host-list string without a lock, between two connection attempts, and
// zoo_set_servers frees that string (ZOOKEEPER-4699). zklock updates the list when a host name's
// addresses change (and once did to force a reconnect); an ASan run of the whole suite beside an
// unreachable server caught the use after free. Here the C client fails to connect to a closed
// port hundreds of times a second while the list is updated as often as ClientConnection allows:
// under ASan (the asan gate runs the unit tier) a read of the freed string aborts the test.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "client/client_connection.h"
#include "client/log_router.h"
#include "deferring_listener.h"

// The C client's process-wide level, from its zookeeper_log.h (which includes <zookeeper.h> by a
// path Debian's layout does not offer).
extern "C" ZooLogLevel logLevel;  // NOLINT(readability-identifier-naming): the C client's name

namespace zklock::detail {
namespace {

using namespace std::chrono_literals;

// A TCP socket bound to a port of the kernel's choice on 127.0.0.1, and that port.
std::pair<int, int> bound_loopback_socket() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  return {fd, ntohs(address.sin_port)};
}

// A port on 127.0.0.1 that refuses connections: bound by the kernel's choice, then closed.
int closed_port() {
  const auto [fd, port] = bound_loopback_socket();
  ::close(fd);
  return port;
}

// A port on 127.0.0.1 that accepts connections and closes them at once, counting them: the
// C client connects, sees its connection end, and tries again.
class CountingListener {
 public:
  CountingListener() {
    std::tie(fd_, port_) = bound_loopback_socket();
    EXPECT_EQ(::listen(fd_, 64), 0);
    thread_ = std::thread([this] {
      for (;;) {
        const int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0) return;  // shut down
        ::close(client);
        accepted_.fetch_add(1);
      }
    });
  }
  ~CountingListener() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }
  CountingListener(const CountingListener&) = delete;
  CountingListener& operator=(const CountingListener&) = delete;

  int port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

TEST(ClientServerListTest, BelowDebugTheClientsWarningsAreOff) {
  for (const LogLevel level : {LogLevel::kError, LogLevel::kWarn, LogLevel::kInfo}) {
    LogSlot slot([](LogLevel, std::string_view) {}, level);
    EXPECT_LT(logLevel, ZOO_LOG_LEVEL_WARN) << "at zklock level " << static_cast<int>(level);
  }
  LogSlot debug([](LogLevel, std::string_view) {}, LogLevel::kDebug);
  EXPECT_EQ(logLevel, ZOO_LOG_LEVEL_INFO);
}

TEST(ClientServerListTest, UpdatesBetweenConnectAttemptsNeverReadTheFreedList) {
  const std::string a = "127.0.0.1:" + std::to_string(closed_port());
  const std::string b = "127.0.0.1:" + std::to_string(closed_port());
  std::mutex lines_mutex;
  std::vector<std::string> lines;
  LogSlot slot(
      [&](LogLevel, std::string_view line) {
        std::lock_guard lock(lines_mutex);
        lines.emplace_back(line);
      },
      LogLevel::kInfo);
  DeferringListener listener;
  {
    // A 600 ms timeout: the C client pauses T/60 = 10 ms after trying every server.
    ClientConnection connection(a, 600ms, 1, listener, slot.callback(), nullptr, nullptr);
    const auto until = std::chrono::steady_clock::now() + 2s;
    int updates = 0;
    while (std::chrono::steady_clock::now() < until) {
      connection.set_servers(++updates % 2 ? a + "," + b : a);
      connection.force_reconnect(true);
    }
    EXPECT_GT(updates, 50);  // list changes are kListChangeSpacing (20 ms) apart
    EXPECT_NE(connection.phase(), ConnectionPhase::kConnected);
  }
  listener.run_deferred();
  // The C client did try, and fail, to connect all along (its routine errors reach kInfo).
  std::lock_guard lock(lines_mutex);
  EXPECT_FALSE(lines.empty());
}

// A list given while forced reconnects run (a host name's new addresses) must be the one the C
// client uses, or it keeps trying addresses that are gone while ClientConnection believes it has
// the new ones - and, believing so, never gives them again. (Forced reconnects once wrote the
// list back into the C client; they now shut the socket down, connection_drop.h.) Each round
// moves the list between a closed port and a listening one while forced reconnects run; once
// they stop, a client told to use the listening port must reach it.
TEST(ClientServerListTest, AForcedReconnectNeverUndoesANewerList) {
  CountingListener listening;
  // The C client compares addresses without their ports (addrvec_contains): a list that differs
  // only in ports is "the same" to it. Another loopback address, where nothing listens, differs.
  const std::string closed = "127.0.0.2:" + std::to_string(listening.port());
  const std::string open = "127.0.0.1:" + std::to_string(listening.port());
  LogSlot slot([](LogLevel, std::string_view) {}, LogLevel::kError);
  DeferringListener listener;
  {
    ClientConnection connection(closed, 600ms, 1, listener, slot.callback(), nullptr, nullptr);
    for (int round = 1; round <= 40; ++round) {
      const bool to_open = round % 2 == 1;
      std::atomic<bool> stop{false};
      std::thread reconnector([&] {
        while (!stop.load()) connection.force_reconnect(true);
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(round % 7));  // varies the overlap
      connection.set_servers(to_open ? open : closed);
      stop.store(true);
      reconnector.join();
      if (!to_open) continue;
      const int before = listening.accepted();
      const auto deadline = std::chrono::steady_clock::now() + 5s;
      while (listening.accepted() == before && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(5ms);
      }
      ASSERT_GT(listening.accepted(), before)
          << "round " << round << ": the C client still tries " << closed << " only";
    }
  }
  listener.run_deferred();
}

// A connect that gets no answer (a server whose SYNs are dropped: cut off, or frozen with a full
// accept queue) is aborted by a forced reconnect too, although its socket has no peer yet for
// getpeername to confirm: the socket is found in the kernel's table instead. Here the server is
// a socket listening with a backlog of 0 that one connection already fills, so that the kernel
// drops every later SYN; the C client's own connect timeout (2T/3 = 20 s) is far away.
TEST(ClientServerListTest, AForcedReconnectAbortsAConnectThatGetsNoAnswer) {
  const auto [server, port] = bound_loopback_socket();
  ASSERT_EQ(::listen(server, 0), 0);
  const auto [filler, filler_port] = bound_loopback_socket();
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  ASSERT_EQ(::connect(filler, reinterpret_cast<sockaddr*>(&address), sizeof address), 0)
      << "filler port " << filler_port;
  LogSlot slot([](LogLevel, std::string_view) {}, LogLevel::kError);
  DeferringListener listener;
  {
    ClientConnection connection("127.0.0.1:" + std::to_string(port), 30s, 1, listener,
                                slot.callback(), nullptr, nullptr);
    // Twice: each forced reconnect must find the attempt made after the last one.
    for (int drop = 1; drop <= 2; ++drop) {
      std::optional<BootClock::time_point> dropped;
      const auto deadline = std::chrono::steady_clock::now() + 5s;
      while (!dropped && std::chrono::steady_clock::now() < deadline) {
        dropped = connection.force_reconnect(false);
        if (!dropped) std::this_thread::sleep_for(10ms);
      }
      ASSERT_TRUE(dropped) << "drop " << drop << ": the connect under way was not aborted";
      EXPECT_NE(connection.phase(), ConnectionPhase::kConnected);
    }
  }
  listener.run_deferred();
  ::close(filler);
  ::close(server);
}

}  // namespace
}  // namespace zklock::detail
