// ClientConnection's forced reconnect against a real server (white box): the next connection
// must go out at once.
//
// After a dropped connection, having tried every address of its list, the C client pauses T/60
// before it connects again ("Delaying connection after exhaustively trying all servers"). Once a
// session has been established, every drop after the first finds it there (one host is listed
// twice, client_hosts, and the C client moves two places per failed attempt). A forced reconnect
// is there to reach a server that answers again: in the kernel-made blips each one met that pause,
// and a healed blip's silence was up to 100 ms longer at T = 6 s (167 ms at 10 s).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "client/client_connection.h"
#include "client/log_router.h"
#include "deferring_listener.h"
#include "support/wait.h"
#include "support/zk_server.h"

namespace zklock::detail {
namespace {

using namespace std::chrono_literals;
using testing::ServerOptions;
using testing::wait_until;
using testing::ZkServer;

TEST(ClientReconnectTest, AForcedReconnectConnectsAgainWithoutTheClientsPause) {
  // A 10-minute session: the C client's pause would be 10 s, far beyond any reconnect's time.
  ServerOptions options;
  options.max_session_timeout_ms = 600000;
  auto server = ZkServer::start(options);
  LogSlot slot([](LogLevel, std::string_view) {}, LogLevel::kError);
  DeferringListener listener;
  {
    ClientConnection connection(server->connect_string(), 600s, 1, listener, slot.callback(),
                                nullptr, nullptr);
    ASSERT_TRUE(wait_until([&] { return connection.epoch() == 1; }, 30s))
        << "the session was never established";
    ASSERT_EQ(connection.negotiated_timeout(), 600s);
    for (std::uint64_t drop = 1; drop <= 3; ++drop) {
      std::optional<BootClock::time_point> dropped;
      ASSERT_TRUE(wait_until(
          [&] {
            if (!dropped) dropped = connection.force_reconnect(true);
            return dropped.has_value();
          },
          5s))
          << "drop " << drop << ": the connection was not dropped";
      // Half the pause: the C client's own schedule would reconnect 10 s after the drop.
      EXPECT_TRUE(wait_until([&] { return connection.epoch() == drop + 1; }, 5s))
          << "drop " << drop << ": not connected again 5 s after it - the C client paused";
      ASSERT_TRUE(wait_until([&] { return connection.epoch() == drop + 1; }, 15s));
    }
  }
  listener.run_deferred();
}

}  // namespace
}  // namespace zklock::detail
