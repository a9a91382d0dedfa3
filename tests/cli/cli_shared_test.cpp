// tests/cli/cli_shared_test.cpp: the read/write lock in the CLI - `exec --shared` / `hold --shared`
// (readers share), `--write` (the write side, for paths that hold a read/write lock), and what
// `status` shows of them (kind, several holders) - the real binary against a real server.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_process.h"
#include "support/files.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/session.h"

namespace zklock::testing {
namespace {

class CliShared : public CliTest {};

namespace fs = std::filesystem;
using nlohmann::json;

// A command for `exec` that creates the file $1, then waits for the file $2 (polling, up to 20 s)
// and exits 0 once it exists, 3 if it never does.
const char* const kMeetScript =
    "touch \"$1\"\n"
    "i=0\n"
    "while [ ! -e \"$2\" ]; do\n"
    "  i=$((i + 1)); [ \"$i\" -gt 2000 ] && exit 3\n"
    "  sleep 0.01\n"
    "done\n";

// Two `exec --shared` on one path run their commands at the same time: each one waits, inside the
// lock, for the file the other creates inside the lock. With an exclusive lock the first would
// time out (exit 3) while the second waits for it.
TEST_F(CliShared, TwoSharedExecsRunAtOnce) {
  const std::string a = dir_.file("a"), b = dir_.file("b");
  Cli first(dir_, cli_args("exec", server_.connect,
                           {"--shared", path_, "--", "sh", "-c", kMeetScript, "sh", a, b}));
  Cli second(dir_, cli_args("exec", server_.connect,
                            {"--shared", path_, "--", "sh", "-c", kMeetScript, "sh", b, a}));
  EXPECT_EQ(first.wait(), 0) << first.output();
  EXPECT_EQ(second.wait(), 0) << second.output();
  EXPECT_EQ(lock_children(session_, path_).size(), 0u) << "every exec released its node";
}

// A reader waits while a writer holds; `status` shows the writer holding and the reader waiting,
// with their kinds; once the writer goes, the reader's command runs.
TEST_F(CliShared, SharedExecWaitsForAWriterAndStatusShowsKinds) {
  Cli writer(dir_, cli_args("hold", server_.connect, {"--write", "--json", path_}));
  const json held = json::parse(writer.wait_for_line());
  EXPECT_EQ(held.at("shared"), false);
  EXPECT_NE(held.at("node").get<std::string>().find("-__WRIT__"), std::string::npos) << held;

  const std::string ran = dir_.file("ran");
  Cli reader(dir_, cli_args("exec", server_.connect, {"--shared", path_, "--", "touch", ran}));
  ASSERT_TRUE(wait_until([&] { return lock_children(session_, path_).size() == 2; }, kEventTimeout))
      << reader.output();
  EXPECT_FALSE(fs::exists(ran)) << "the reader ran beside the writer";

  const auto as_json = run_cli(dir_, cli_args("status", server_.connect, {"--json", path_}));
  ASSERT_EQ(as_json.exit_code, 0) << as_json.output;
  const json contenders = json::parse(as_json.output).at("contenders");
  ASSERT_EQ(contenders.size(), 2u) << contenders.dump(2);
  EXPECT_EQ(contenders[0].at("kind"), "write");
  EXPECT_EQ(contenders[0].at("holder"), true);
  EXPECT_EQ(path_ + "/" + contenders[0].at("name").get<std::string>(), held.at("node"));
  EXPECT_EQ(contenders[1].at("kind"), "read");
  EXPECT_EQ(contenders[1].at("holder"), false);
  const auto as_text = run_cli(dir_, cli_args("status", server_.connect, {path_}));
  ASSERT_EQ(as_text.exit_code, 0) << as_text.output;
  const auto lines = lines_of(as_text.output);
  ASSERT_EQ(lines.size(), 3u) << as_text.output;
  EXPECT_EQ(
      lines[1].rfind("0 holder " + contenders[0].at("name").get<std::string>() + " kind=write ", 0),
      0u)
      << lines[1];
  EXPECT_EQ(
      lines[2].rfind("1 waiting " + contenders[1].at("name").get<std::string>() + " kind=read ", 0),
      0u)
      << lines[2];
  EXPECT_FALSE(fs::exists(ran)) << "the reader ran beside the writer";

  writer.signal(SIGTERM);
  EXPECT_EQ(writer.wait(), 0) << writer.output();
  EXPECT_EQ(reader.wait(), 0) << reader.output();
  EXPECT_TRUE(fs::exists(ran));
  EXPECT_EQ(lock_children(session_, path_).size(), 0u);
}

// Readers holding together are all holders in `status`; a writer behind them waits; `hold
// --shared --json` says shared, on a "__READ__" node.
TEST_F(CliShared, StatusShowsEveryReaderHolding) {
  Cli r1(dir_, cli_args("hold", server_.connect, {"--shared", "--json", path_}));
  const json first = json::parse(r1.wait_for_line());
  EXPECT_EQ(first.at("shared"), true);
  EXPECT_NE(first.at("node").get<std::string>().find("-__READ__"), std::string::npos) << first;
  Cli r2(dir_, cli_args("hold", server_.connect, {"--shared", path_}));
  EXPECT_FALSE(r2.wait_for_line().empty()) << r2.output();  // held beside r1
  Cli w(dir_, cli_args("exec", server_.connect, {"--write", path_, "--", "true"}));
  ASSERT_TRUE(wait_until([&] { return lock_children(session_, path_).size() == 3; }, kEventTimeout))
      << w.output();

  const auto as_json = run_cli(dir_, cli_args("status", server_.connect, {"--json", path_}));
  ASSERT_EQ(as_json.exit_code, 0) << as_json.output;
  const json contenders = json::parse(as_json.output).at("contenders");
  ASSERT_EQ(contenders.size(), 3u) << contenders.dump(2);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(contenders[i].dump());
    EXPECT_EQ(contenders[i].at("kind"), i < 2 ? "read" : "write");
    EXPECT_EQ(contenders[i].at("holder"), i < 2);
  }
  const auto as_text = run_cli(dir_, cli_args("status", server_.connect, {path_}));
  ASSERT_EQ(as_text.exit_code, 0) << as_text.output;
  EXPECT_NE(as_text.output.find("holders first"), std::string::npos) << as_text.output;

  r1.signal(SIGTERM);
  r2.signal(SIGTERM);
  EXPECT_EQ(r1.wait(), 0) << r1.output();
  EXPECT_EQ(r2.wait(), 0) << r2.output();
  EXPECT_EQ(w.wait(), 0) << w.output();
  EXPECT_EQ(lock_children(session_, path_).size(), 0u);
}

// A path holding another library's reader (Curator's name): plain exec refuses it (64, pointing
// at --write and --shared); --shared runs beside the reader at once; --write waits for it.
TEST_F(CliShared, WriteAndSharedTakeAPathHoldingAReadWriteLock) {
  session_.create(path_, {}, CreateMode::kPersistent, true);
  const std::string reader = path_ + "/_c_00000000-0000-4000-8000-000000000000-__READ__0000000000";
  session_.create(reader, {}, CreateMode::kEphemeral);

  const auto refused = run_cli(dir_, cli_args("exec", server_.connect, {path_, "--", "true"}));
  EXPECT_EQ(refused.exit_code, 64) << refused.output;
  EXPECT_NE(refused.output.find("--write"), std::string::npos) << refused.output;

  const auto shared =
      run_cli(dir_, cli_args("exec", server_.connect, {"--shared", path_, "--", "true"}));
  EXPECT_EQ(shared.exit_code, 0) << shared.output;

  const std::string ran = dir_.file("ran");
  Cli writer(dir_, cli_args("exec", server_.connect, {"--write", path_, "--", "touch", ran}));
  ASSERT_TRUE(wait_until([&] { return lock_children(session_, path_).size() == 2; }, kEventTimeout))
      << writer.output();
  EXPECT_FALSE(fs::exists(ran)) << "the writer ran beside the reader";
  session_.remove(reader);
  EXPECT_EQ(writer.wait(), 0) << writer.output();
  EXPECT_TRUE(fs::exists(ran));
  EXPECT_EQ(lock_children(session_, path_).size(), 0u);
}

TEST_F(CliShared, SharedAndWriteTogetherAreBadUsage) {
  const auto both = run_cli(
      dir_, cli_args("exec", server_.connect, {"--shared", "--write", path_, "--", "true"}));
  EXPECT_EQ(both.exit_code, 64) << both.output;
  EXPECT_FALSE(session_.children(path_).has_value()) << "zklock queued on bad usage";
}

}  // namespace
}  // namespace zklock::testing
