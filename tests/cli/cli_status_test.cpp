// tests/cli/cli_status_test.cpp: `zklock status` - the real binary against a real ZooKeeper
// server: the queue, holder first, as text and JSON, with zklock's own identity and other
// libraries' raw data; an absent lock; and data that is not ours never breaking it.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_process.h"
#include "support/files.h"
#include "support/four_letter_words.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/contender.h"
#include "zklock/session.h"

namespace zklock::testing {
namespace {

class CliStatus : public CliTest {};

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// status

TEST_F(CliStatus, ShowsTheQueueHolderFirstAsTextAndJson) {
  const std::vector<std::string> env = {"ZKLOCK_CONNECT=" + server_.connect};  // no --connect

  Cli holder(dir_, {"hold", "--description", "the holder", path_}, env);
  std::istringstream fields(holder.wait_for_line());
  std::string token, sequence, holder_node;
  fields >> token >> sequence >> holder_node;
  // Two waiters, queued one after the other so that their order is known.
  Cli first(dir_, {"exec", "--description", "first \"waiter\"", path_, "--", "true"}, env);
  ASSERT_TRUE(
      wait_until([&] { return lock_children(session_, path_).size() == 2; }, kEventTimeout));
  Cli second(dir_, {"exec", "--description", "second waiter", path_, "--", "true"}, env);
  ASSERT_TRUE(
      wait_until([&] { return lock_children(session_, path_).size() == 3; }, kEventTimeout));
  // A kazoo-named node with kazoo's kind of data (not zklock's JSON) queues last.
  const std::string kazoo_name = "0123456789abcdef0123456789abcdef__lock__0000000999";
  session_.create(path_ + "/" + kazoo_name, "kazoo-identifier", CreateMode::kEphemeral);

  char host[256] = {};
  gethostname(host, sizeof host - 1);

  const auto as_json = run_cli(dir_, {"status", "--json", path_}, env);
  ASSERT_EQ(as_json.exit_code, 0) << as_json.output;
  const json status = json::parse(as_json.output);
  EXPECT_EQ(status.at("path"), path_);
  const json& contenders = status.at("contenders");
  ASSERT_EQ(contenders.size(), 4u) << status.dump(2);
  const std::vector<std::string> descriptions = {"the holder", "first \"waiter\"", "second waiter"};
  const std::vector<pid_t> pids = {holder.pid(), first.pid(), second.pid()};
  std::set<std::string> sessions;
  for (size_t i = 0; i < 3; ++i) {
    const json& c = contenders[i];
    SCOPED_TRACE(c.dump());
    EXPECT_EQ(c.at("position"), i);
    EXPECT_EQ(c.at("holder"), i == 0);
    EXPECT_EQ(c.at("naming"), "protected");
    EXPECT_EQ(c.at("description"), descriptions[i]);
    EXPECT_EQ(c.at("pid"), pids[i]);
    EXPECT_EQ(c.at("host"), host);
    const auto node = session_.get(path_ + "/" + c.at("name").get<std::string>());
    ASSERT_TRUE(node.has_value());
    EXPECT_EQ(c.at("czxid"), node->stat.czxid);
    EXPECT_EQ(c.at("session_id"), format_session_id(node->stat.ephemeral_owner));
    EXPECT_EQ(c.at("data"), node->data);
    sessions.insert(c.at("session_id"));
    if (i > 0) {
      EXPECT_GT(c.at("sequence"), contenders[i - 1].at("sequence"));
    }
  }
  EXPECT_EQ(sessions.size(), 3u);
  EXPECT_EQ(path_ + "/" + contenders[0].at("name").get<std::string>(), holder_node);
  EXPECT_EQ(contenders[0].at("czxid").get<std::int64_t>(), std::stoll(token));
  const json& kazoo = contenders[3];
  EXPECT_EQ(kazoo.at("name"), kazoo_name);
  EXPECT_EQ(kazoo.at("naming"), "kazoo");
  EXPECT_EQ(kazoo.at("holder"), false);
  EXPECT_EQ(kazoo.at("data"), "kazoo-identifier");
  EXPECT_TRUE(kazoo.at("host").is_null());
  EXPECT_TRUE(kazoo.at("description").is_null());

  const auto as_text = run_cli(dir_, {"status", path_}, env);
  ASSERT_EQ(as_text.exit_code, 0) << as_text.output;
  const auto lines = lines_of(as_text.output);
  ASSERT_EQ(lines.size(), 5u) << as_text.output;
  EXPECT_NE(lines[0].find("4 contenders"), std::string::npos) << lines[0];
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(lines[i + 1]);
    const json& c = contenders[i];
    EXPECT_EQ(lines[i + 1].rfind(std::to_string(i) + (i == 0 ? " holder " : " waiting ") +
                                     c.at("name").get<std::string>(),
                                 0),
              0u);
    EXPECT_NE(lines[i + 1].find("czxid=" + std::to_string(c.at("czxid").get<std::int64_t>())),
              std::string::npos);
    EXPECT_NE(lines[i + 1].find("session=" + c.at("session_id").get<std::string>()),
              std::string::npos);
    if (i < 3) {
      EXPECT_NE(lines[i + 1].find("description=" + json(descriptions[i]).dump()),
                std::string::npos);
      EXPECT_NE(lines[i + 1].find("pid=" + std::to_string(pids[i])), std::string::npos);
    } else {
      EXPECT_NE(lines[i + 1].find("data=\"kazoo-identifier\""), std::string::npos);
    }
  }
  EXPECT_EQ(lock_children(session_, path_).size(), 4u) << "status must not queue";

  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
  EXPECT_EQ(first.wait(), 0) << first.output();
  EXPECT_EQ(second.wait(), 0) << second.output();
}

TEST_F(CliStatus, AbsentLockIsAnEmptyQueue) {
  const auto as_json = run_cli(dir_, cli_args("status", server_.connect, {"--json", path_}));
  ASSERT_EQ(as_json.exit_code, 0) << as_json.output;
  const json status = json::parse(as_json.output);
  EXPECT_EQ(status.at("path"), path_);
  EXPECT_TRUE(status.at("contenders").empty());
  // Digest credentials (--user) are accepted by the server for any user: still just an empty queue.
  const auto as_text =
      run_cli(dir_, cli_args("status", server_.connect, {"--user", "alice:secret", path_}));
  EXPECT_EQ(as_text.exit_code, 0) << as_text.output;
  EXPECT_NE(as_text.output.find("no contenders"), std::string::npos) << as_text.output;
}

// ---------------------------------------------------------------------------------------------
// Data that is not ours (issue 13: "data from the server is untrusted"). Any client of the
// ensemble can put children under a lock path and any data in them: status lists only what parses
// as a contender, shows foreign data raw, and never crashes or prints broken JSON.

// Runs `zklock status` on `path` as JSON and as text; both must succeed. Returns the JSON's
// contenders (empty when it did not parse) and checks the text has one line per contender.
json status_of(const TempDir& dir, const std::string& connect, const std::string& path) {
  const auto as_json = run_cli(dir, cli_args("status", connect, {"--json", path}));
  EXPECT_EQ(as_json.exit_code, 0) << as_json.output.substr(0, 2000);
  const json document = json::parse(as_json.output, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(document.is_discarded()) << "not JSON:\n" << as_json.output.substr(0, 2000);
  if (document.is_discarded() || !document.contains("contenders")) return json::array();
  const json contenders = document.at("contenders");

  const auto as_text = run_cli(dir, cli_args("status", connect, {path}));
  EXPECT_EQ(as_text.exit_code, 0) << as_text.output.substr(0, 2000);
  const auto lines = lines_of(as_text.output);
  EXPECT_EQ(lines.size(), contenders.size() + 1) << as_text.output.substr(0, 2000);
  for (std::size_t i = 0; i + 1 < lines.size() && i < contenders.size(); ++i) {
    EXPECT_EQ(lines[i + 1].rfind(std::to_string(i) + (i == 0 ? " holder " : " waiting ") +
                                     contenders[i].at("name").get<std::string>(),
                                 0),
              0u)
        << lines[i + 1].substr(0, 200);
  }
  return contenders;
}

TEST_F(CliStatus, ChildNamesThatAreNotContendersAreSkipped) {
  Cli holder(dir_, cli_args("hold", server_.connect, {path_}));
  std::istringstream fields(holder.wait_for_line());
  std::string token, sequence, holder_node;
  fields >> token >> sequence >> holder_node;

  const std::vector<std::string> names = {
      "no-sequence",         // no marker at all
      "x-lock-",             // a marker and nothing after it
      "x-lock-12",           // too short for "%010d"
      "x-lock-00000000001",  // too long
      "x-lock-9999999999",   // above 2^31 - 1
      "x-lock--9999999999",  // below -2^31
      "x-lock-+000000001",   // a sign ZooKeeper never writes
      "x-lock-00000000x1",   // not a number
      "x__lock__123",        // kazoo's marker, a short number
      "\xc3\xbc"
      "n\xc3\xaf"
      "c\xc3\xb6"
      "d\xc3\xa9 \xe2\x98\x83 \"quoted\" name",     // odd characters
      std::string(4000, 'n'),                       // a huge name
      std::string(4000, 'h') + "-lock-0000000005",  // huge, but a contender's
      "\xe2\x98\x83-lock-0000000007",               // odd characters, but a contender's
      "x-lock--000000005",  // a negative sequence (past the wrap), a contender's
  };
  std::set<std::string> expected = {holder_node.substr(path_.size() + 1)};
  for (const auto& name : names) {
    session_.create(path_ + "/" + name, "not ours", CreateMode::kEphemeral);
    if (parse_contender_name(name)) expected.insert(name);
  }
  EXPECT_EQ(expected.size(), 4u) << "the holder and three names that parse as contenders";

  const json contenders = status_of(dir_, server_.connect, path_);
  std::set<std::string> listed;
  for (const auto& c : contenders) listed.insert(c.at("name").get<std::string>());
  EXPECT_EQ(listed, expected);
  ASSERT_FALSE(contenders.empty());
  EXPECT_EQ(path_ + "/" + contenders[0].at("name").get<std::string>(), holder_node)
      << "the holder is first: the others came later";

  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
}

TEST_F(CliStatus, DataThatIsNotOursIsShownRawNeverAsOurs) {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  const std::vector<std::string> data = {
      "",                                                   // empty
      every_byte,                                           // binary, invalid UTF-8
      std::string(512 * 1024, 'x'),                         // huge (ZooKeeper's limit is 1 MiB)
      "[1, 2, 3]",                                          // JSON, not an object
      "\"zklock\"",                                         // JSON, a string
      "{\"lib\":\"zklock\",",                               // truncated
      "{\"lib\":\"kazoo\",\"pid\":1}",                      // someone else's object
      std::string(200000, '[') + std::string(200000, ']'),  // deeply nested
      "{\"lib\":\"zklock\",\"host\":42,\"pid\":\"123\",\"description\":[\"a\"]}",  // wrong types
      "{\"lib\":\"zklock\",\"pid\":1.5,\"description\":\"\xff\xfe\"}",             // bad UTF-8
  };
  for (std::size_t i = 0; i < data.size(); ++i) {
    char sequence[16];
    std::snprintf(sequence, sizeof sequence, "%010d", static_cast<int>(i) + 1);
    session_.create(path_ + "/d" + std::to_string(i) + "-lock-" + sequence, data[i],
                    CreateMode::kEphemeral, /*make_parents=*/true);
  }

  const json contenders = status_of(dir_, server_.connect, path_);
  ASSERT_EQ(contenders.size(), data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    const json& c = contenders[i];
    SCOPED_TRACE("data #" + std::to_string(i));
    EXPECT_EQ(c.at("name").get<std::string>().rfind("d" + std::to_string(i) + "-lock-", 0), 0u);
    EXPECT_EQ(c.at("naming"), "plain");
    EXPECT_TRUE(c.at("data").is_string());
    EXPECT_TRUE(c.at("host").is_null()) << c.at("host");
    EXPECT_TRUE(c.at("pid").is_null()) << c.at("pid");
    EXPECT_TRUE(c.at("description").is_null()) << c.at("description");
  }
  // Data that is valid UTF-8 comes back byte for byte.
  for (const std::size_t i : {0u, 2u, 3u, 6u, 7u, 8u}) {
    EXPECT_EQ(contenders[i].at("data").get<std::string>(), data[i]) << "data #" << i;
  }
}

}  // namespace
}  // namespace zklock::testing
