// The C client's server-list update, called between two connection attempts, must not make it
// read freed memory (src/client/log_router.cpp).
//
// The 3.8 C client formats its "Delaying connection after exhaustively trying all servers [%s]"
// warning from its host-list string without a lock, between two connection attempts, and
// zoo_set_servers frees that string (ZOOKEEPER-4699). zklock updates the list to force a
// reconnect and when a host name's addresses change; an ASan run of the whole suite beside an
// unreachable server caught the use after free. Here the C client fails to connect to a closed
// port hundreds of times a second while the list is updated as fast as it can be: under ASan
// (the asan gate runs the unit tier) a read of the freed string aborts the test.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "client/client_connection.h"
#include "client/log_router.h"

// The C client's process-wide level, from its zookeeper_log.h (which includes <zookeeper.h> by a
// path Debian's layout does not offer).
extern "C" ZooLogLevel logLevel;  // NOLINT(readability-identifier-naming): the C client's name

namespace zklock::detail {
namespace {

using namespace std::chrono_literals;

// A port on 127.0.0.1 that refuses connections: bound by the kernel's choice, then closed.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

// Nothing is answered here; refused requests are completed after the connection is closed.
class Listener : public ConnectionListener {
 public:
  void on_answered(const Answer&) override {}
  void on_connection_event(unsigned, ConnectionEvent) override {}
  void defer(std::function<void()> task) override {
    std::lock_guard lock(mutex_);
    deferred_.push_back(std::move(task));
  }
  void run_deferred() {
    std::vector<std::function<void()>> tasks;
    {
      std::lock_guard lock(mutex_);
      tasks.swap(deferred_);
    }
    for (auto& task : tasks) task();
  }

 private:
  std::mutex mutex_;
  std::vector<std::function<void()>> deferred_;
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
  Listener listener;
  {
    // A 600 ms timeout: the C client pauses T/60 = 10 ms after trying every server.
    ClientConnection connection(a, 600ms, 1, listener, slot.callback(), nullptr, nullptr);
    const auto until = std::chrono::steady_clock::now() + 2s;
    int updates = 0;
    while (std::chrono::steady_clock::now() < until) {
      connection.set_servers(++updates % 2 ? a + "," + b : a);
      connection.force_reconnect(true);
    }
    EXPECT_GT(updates, 100);
    EXPECT_NE(connection.phase(), ConnectionPhase::kConnected);
  }
  listener.run_deferred();
  // The C client did try, and fail, to connect all along (its routine errors reach kInfo).
  std::lock_guard lock(lines_mutex);
  EXPECT_FALSE(lines.empty());
}

}  // namespace
}  // namespace zklock::detail
