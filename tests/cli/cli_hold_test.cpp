// tests/cli/cli_hold_test.cpp: `zklock hold` (the acquisition it prints, the release on a signal)
// and the help every command gives - the real binary against a real ZooKeeper server.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_process.h"
#include "support/four_letter_words.h"
#include "support/temp_dir.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/session.h"

namespace zklock::testing {
namespace {

class CliHold : public CliTest {};

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// hold

TEST_F(CliHold, PrintsTheAcquisitionAndReleasesOnSigterm) {
  Cli holder(dir_, cli_args("hold", server_.connect, {"--json", path_}));
  const json line = json::parse(holder.wait_for_line());
  const std::string node = line.at("node");
  const auto data = session_.get(node);
  ASSERT_TRUE(data.has_value()) << line.dump();
  EXPECT_EQ(line.at("path"), path_);
  EXPECT_EQ(line.at("fencing_token"), std::to_string(data->stat.czxid));
  EXPECT_EQ(line.at("czxid"), data->stat.czxid);
  EXPECT_EQ(line.at("session_id"), format_session_id(data->stat.ephemeral_owner));
  EXPECT_EQ(path_ + "/" + session_.children(path_)->front(), node);

  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
  EXPECT_FALSE(session_.get(node).has_value()) << "hold exited without releasing";

  // The plain form: "TOKEN SEQUENCE NODE".
  Cli plain(dir_, cli_args("hold", server_.connect, {path_}));
  std::istringstream fields(plain.wait_for_line());
  std::string token, sequence, plain_node;
  fields >> token >> sequence >> plain_node;
  const auto plain_data = session_.get(plain_node);
  ASSERT_TRUE(plain_data.has_value()) << plain.output();
  EXPECT_EQ(token, std::to_string(plain_data->stat.czxid));
  EXPECT_GT(std::stoll(token), line.at("czxid").get<std::int64_t>()) << "tokens grow";
  EXPECT_EQ(std::stoi(plain_node.substr(plain_node.rfind("-lock-") + 6)), std::stoi(sequence));
  plain.signal(SIGINT);
  EXPECT_EQ(plain.wait(), 0) << plain.output();
}

// ---------------------------------------------------------------------------------------------
// help

TEST(CliHelp, MainAndCommandHelpExplainThemselves) {
  const TempDir dir;
  const auto main_help = run_cli(dir, {"--help"});
  EXPECT_EQ(main_help.exit_code, 0);
  for (const char* word : {"exec", "hold", "status", "Exit codes", "76", "ZKLOCK_CONNECT"}) {
    EXPECT_NE(main_help.output.find(word), std::string::npos) << word << "\n" << main_help.output;
  }
  const auto exec_help = run_cli(dir, {"exec", "--help"});
  EXPECT_EQ(exec_help.exit_code, 0);
  for (const char* word : {"LOCK_PATH -- COMMAND", "ZKLOCK_FENCING_TOKEN", "ZKLOCK_SESSION_ID",
                           "--on-lost", "--grace", "--timeout", "127", "Examples"}) {
    EXPECT_NE(exec_help.output.find(word), std::string::npos) << word << "\n" << exec_help.output;
  }
  const auto hold_help = run_cli(dir, {"hold", "--help"});
  EXPECT_EQ(hold_help.exit_code, 0);
  EXPECT_NE(hold_help.output.find("--json"), std::string::npos) << hold_help.output;
  const auto status_help = run_cli(dir, {"status", "--help"});
  EXPECT_EQ(status_help.exit_code, 0);
  EXPECT_NE(status_help.output.find("\"contenders\""), std::string::npos) << status_help.output;
  EXPECT_EQ(run_cli(dir, {}).exit_code, 64) << "no command is bad usage";
}

}  // namespace
}  // namespace zklock::testing
