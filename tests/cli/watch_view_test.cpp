// tests/cli/watch_view_test.cpp: what one refresh of `zklock status --watch` shows
// (tools/zklock/watch_view.h), for queues made up here: the header, a row per contender with its
// age and identity, the holders of a read/write lock, the empty, missing and failed cases, other
// libraries' data shortened, and nothing from the server reaching the terminal as a control
// character. The real binary in a real terminal: cli_status_watch_test.cpp.
#include "watch_view.h"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

namespace zklock::cli {
namespace {

using std::chrono::milliseconds;

constexpr std::int64_t kNowMs = 1'700'000'000'000;

WatchHeader header_at(SessionState state = SessionState::kConnected) {
  return {"/locks/x", std::chrono::system_clock::time_point(milliseconds(kNowMs)), state,
          milliseconds(1500)};
}

Contender contender(ContenderKind kind, const std::string& data, std::int32_t sequence = 1) {
  Contender c;
  c.name = "_c_0-lock-" + std::to_string(sequence);
  c.sequence = sequence;
  c.kind = kind;
  c.data = data;
  return c;
}

std::string ours(const std::string& host, int pid, const std::string& description) {
  return R"({"lib":"zklock","host":")" + host + R"(","pid":)" + std::to_string(pid) +
         R"(,"description":")" + description + R"("})";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t from = 0;
  for (auto end = text.find('\n'); end != std::string::npos; end = text.find('\n', from)) {
    lines.push_back(text.substr(from, end - from));
    from = end + 1;
  }
  EXPECT_EQ(from, text.size()) << "every line ends in a newline:\n" << text;
  return lines;
}

TEST(WatchViewTest, HeaderSaysPathTimeSessionStateAndInterval) {
  QueueSnapshot snapshot;
  const auto lines = lines_of(render_watch_view(header_at(SessionState::kSuspended), snapshot));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(std::regex_match(
      lines[0], std::regex(R"(/locks/x  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  session Suspended  )"
                           R"(every 1500ms)")))
      << lines[0];
  EXPECT_EQ(lines[1], "no contenders (the lock is free)");
}

TEST(WatchViewTest, OneRowPerContenderInQueueOrderWithAgeAndIdentity) {
  QueueSnapshot snapshot;
  snapshot.contenders = {contender(ContenderKind::kExclusive, ours("web1", 4242, "deploy"), 7),
                         contender(ContenderKind::kExclusive, ours("web22", 977, "a b"), 8),
                         contender(ContenderKind::kExclusive, R"({"lib":"zklock"})", 9)};
  snapshot.created_ms = {kNowMs - 245'900, kNowMs - 12'345, std::nullopt};
  const auto lines = lines_of(render_watch_view(header_at(), snapshot));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[1], "POS  ROLE     KIND       AGE    HOST   PID   DESCRIPTION");
  EXPECT_EQ(lines[2], "0    holder   exclusive  4m05s  web1   4242  \"deploy\"");
  EXPECT_EQ(lines[3], "1    waiting  exclusive  12.3s  web22  977   \"a b\"");
  EXPECT_EQ(lines[4], "2    waiting  exclusive  -      -      -     -")
      << "a node gone before its read, and zklock's data without the identity fields";
}

TEST(WatchViewTest, ReadersWithOnlyReadersAheadAllHold) {
  QueueSnapshot snapshot;
  snapshot.contenders = {contender(ContenderKind::kRead, ours("h", 1, "r1"), 1),
                         contender(ContenderKind::kRead, ours("h", 2, "r2"), 2),
                         contender(ContenderKind::kWrite, ours("h", 3, "w"), 3),
                         contender(ContenderKind::kRead, ours("h", 4, "r3"), 4)};
  snapshot.created_ms = {kNowMs, kNowMs, kNowMs, kNowMs};
  const auto lines = lines_of(render_watch_view(header_at(), snapshot));
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[2].substr(0, 20), "0    holder   read  ");
  EXPECT_EQ(lines[3].substr(0, 20), "1    holder   read  ");
  EXPECT_EQ(lines[4].substr(0, 20), "2    waiting  write ");
  EXPECT_EQ(lines[5].substr(0, 20), "3    waiting  read  ");
}

TEST(WatchViewTest, MissingPathAndFailedReadAreSaidInsteadOfRows) {
  QueueSnapshot missing;
  missing.outcome = QueueSnapshot::Outcome::kPathMissing;
  EXPECT_EQ(lines_of(render_watch_view(header_at(), missing)).at(1), "path does not exist");

  QueueSnapshot failed;
  failed.outcome = QueueSnapshot::Outcome::kFailed;
  failed.failure = "connection loss";
  EXPECT_EQ(lines_of(render_watch_view(header_at(SessionState::kSuspended), failed)).at(1),
            "could not read the queue: connection loss");
}

TEST(WatchViewTest, OtherLibrariesDataIsShownRawAndShortened) {
  QueueSnapshot snapshot;
  snapshot.contenders = {contender(ContenderKind::kExclusive, "worker-3"),
                         contender(ContenderKind::kExclusive, std::string(512 * 1024, 'x'))};
  snapshot.created_ms = {kNowMs - 1000, kNowMs - 1000};
  const auto lines = lines_of(render_watch_view(header_at(), snapshot));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "0    holder   exclusive  1.0s  -     -    data=\"worker-3\"");
  EXPECT_EQ(lines[3],
            "1    waiting  exclusive  1.0s  -     -    data=\"" + std::string(60, 'x') + "\"...");
}

TEST(WatchViewTest, NothingFromTheServerReachesTheTerminalAsAControlCharacter) {
  QueueSnapshot snapshot;
  // A host with an escape sequence (JSON-escaped in the node), a description with a C1 CSI.
  snapshot.contenders = {contender(ContenderKind::kExclusive, ours("evil\\u001b[2Jhost", 1,
                                                                   "x\xc2\x9b"
                                                                   "31m")),
                         contender(ContenderKind::kExclusive, "raw\x1b]0;title\x07\x7f")};
  snapshot.created_ms = {kNowMs, kNowMs};
  const std::string text = render_watch_view(header_at(), snapshot);
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (byte >= 0x20 && byte != 0x7f)) << "byte " << int{byte} << ":\n"
                                                             << text;
  }
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
  EXPECT_NE(text.find("evil\\x1b[2Jhost"), std::string::npos) << text;
  EXPECT_NE(text.find("\"x\\u009b31m\""), std::string::npos) << text;
}

TEST(WatchViewTest, TerminalSafeKeepsPrintableTextAndUtf8) {
  EXPECT_EQ(terminal_safe("plain text /locks/x"), "plain text /locks/x");
  EXPECT_EQ(terminal_safe("caf\xc3\xa9 \xe2\x98\x83 \xc2\xa0"),
            "caf\xc3\xa9 \xe2\x98\x83 \xc2\xa0");
  EXPECT_EQ(terminal_safe("a\tb\x1b"
                          "c\x7f"),
            "a\\x09b\\x1bc\\x7f");
  EXPECT_EQ(terminal_safe("\xc2\x85\xc2\x9f\xc2"), "\\u0085\\u009f\xc2")
      << "a lone lead byte stays";
}

}  // namespace
}  // namespace zklock::cli
