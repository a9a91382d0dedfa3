// What a Session writes to its log at the default level, against a real server: nothing for a
// healthy start-up, one line in zklock's words when it is Suspended and one when it answers again,
// the C client's own complaints held back, and one line when the session's monitor is held up.
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "session/session_core.h"
#include "support/fault_proxy.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

// What a Session writes to its log sink, kept for the test to read.
class CapturedLog {
 public:
  // `o`, its log going here.
  SessionOptions into(SessionOptions o) {
    o.log_sink = sink();
    return o;
  }
  LogSink sink() {
    return [this](LogLevel level, std::string_view line) {
      std::lock_guard lock(mutex_);
      lines_.emplace_back(level, std::string(line));
    };
  }
  // Every line but those saying the monitor was held up: a stalled machine may add them to any
  // test, and they are tested on their own (AMonitorHeldUpSaysByWhatAndHowLong).
  std::vector<std::pair<LogLevel, std::string>> lines() const {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<LogLevel, std::string>> kept;
    for (const auto& line : lines_) {
      if (line.second.find(kHeldUp) == std::string::npos) kept.push_back(line);
    }
    return kept;
  }
  static constexpr std::string_view kHeldUp = "its monitor was held up";
  std::size_t count(std::string_view needle) const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& [level, line] : lines_) n += line.find(needle) != std::string::npos;
    return n;
  }
  std::string all() const {
    std::lock_guard lock(mutex_);
    std::string text;
    for (const auto& [level, line] : lines_) text += line + "\n";
    return text;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<LogLevel, std::string>> lines_;
};

TEST(SessionConsoleTest, AHealthyStartAndCloseWriteNothing) {
  auto server = shared_server();
  CapturedLog log;
  {
    Session s(log.into(options_for(server.connect)));
    Mutex m(s, unique_path("quiet"));
    m.lock();
    m.unlock();
  }
  EXPECT_TRUE(log.lines().empty()) << log.all();
}

TEST(SessionConsoleTest, ADisconnectIsOneLineWhenItHappensAndOneWhenItEnds) {
  auto server = shared_server();
  auto proxy = FaultProxy::start("127.0.0.1", server.port);
  CapturedLog log;
  Session s(log.into(options_for(proxy->connect_string(), 3000ms)));
  proxy->blackhole();
  ASSERT_TRUE(wait_until([&] { return s.state() == SessionState::kSuspended; }, 10s));
  proxy->heal(Heal::kResetDamaged);
  ASSERT_TRUE(wait_until([&] { return s.state() == SessionState::kConnected; }, 10s));
  ASSERT_TRUE(wait_until([&] { return log.count("answers again") == 1; }, 5s)) << log.all();
  EXPECT_EQ(log.count("suspended"), 1u) << log.all();
  EXPECT_EQ(log.lines().size(), 2u) << "only zklock's two lines at the default level:\n"
                                    << log.all();
}

// A monitor pass held up past half the time to Suspended - here by a scheduled task that blocks
// it, as a slow task or a stalled machine would - is said in one line: by what, for how long.
TEST(SessionConsoleTest, AMonitorHeldUpSaysByWhatAndHowLong) {
  auto server = shared_server();
  CapturedLog log;
  Session s(log.into(options_for(server.connect, 4000ms)));
  const auto core = detail::SessionAccess::core(s);
  const auto limit = core->settings().suspend_after / 2;
  ASSERT_GT(limit.count(), 0);
  std::atomic<bool> ran{false};
  core->schedule(0ms, [&] {
    std::this_thread::sleep_for(limit + 300ms);  // the fault: a task that holds the monitor up
    ran = true;
  });
  ASSERT_TRUE(wait_until([&] { return ran.load() && log.count(CapturedLog::kHeldUp) >= 1; }, 10s))
      << log.all();
  EXPECT_GE(log.count(CapturedLog::kHeldUp), 1u) << log.all();
  EXPECT_EQ(log.count("ms running deferred and scheduled tasks"), 1u) << log.all();
}

TEST(SessionConsoleTest, AnUnreachableServerDoesNotFloodTheLogAtInfo) {
  auto server = shared_server();
  auto proxy = FaultProxy::start("127.0.0.1", server.port);
  CapturedLog log;
  SessionOptions o = log.into(options_for(proxy->connect_string(), 4000ms));
  o.log_level = LogLevel::kInfo;
  Session s(o);
  const std::size_t before = log.lines().size();
  proxy->refuse_new(true);
  proxy->reset_all();  // every reconnect attempt is refused from now on, many a second
  ASSERT_TRUE(wait_until([&] { return proxy->refused() >= 20; }, 20s));
  const std::size_t during = log.lines().size() - before;
  EXPECT_LE(during, 8u) << "lines while the server refused " << proxy->refused() << " connects:\n"
                        << log.all();
  proxy->refuse_new(false);
}

}  // namespace
}  // namespace zklock::testing
