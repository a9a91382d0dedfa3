// tests/cli/cli_revoke_test.cpp: `zklock revoke` and `--revocable` - the real binary against a
// real ZooKeeper server: a revocable exec stops its command and releases, a revocable hold
// releases, a holder that is not revocable is not asked (77), nobody to ask is 66, a semaphore's
// lease holders are asked, and with credentials nobody else may ask (77).
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_process.h"
#include "support/files.h"
#include "support/wait.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

class CliRevoke : public CliTest {
 protected:
  // The node a `zklock hold` prints ("TOKEN SEQUENCE NODE").
  static std::string node_of(Cli& holder) {
    std::istringstream fields(holder.wait_for_line());
    std::string token, sequence, node;
    fields >> token >> sequence >> node;
    return node;
  }
  CliResult revoke(std::vector<std::string> rest) {
    return run_cli(dir_, cli_args("revoke", server_.connect, std::move(rest)));
  }
};

TEST_F(CliRevoke, ARevocableExecStopsItsCommandAndReleases) {
  const std::string events = dir_.file("events");
  Cli holder(dir_,
             cli_args("exec", server_.connect,
                      {"--revocable", path_, "--", "sh", "-c",
                       "echo started >> \"$EVENTS\"; exec sleep 1000"}),
             {"EVENTS=" + events});
  ASSERT_TRUE(wait_until([&] { return read_file(events) == "started\n"; }, kEventTimeout))
      << holder.output();
  const std::string node = lock_children(session_, path_).at(0);
  EXPECT_NE(session_.get(path_ + "/" + node)->data.find("\"revocable\":true"), std::string::npos);

  const CliResult asked = revoke({path_});
  EXPECT_EQ(asked.exit_code, 0) << asked.output;
  EXPECT_NE(asked.output.find("asked " + node + " to let go"), std::string::npos) << asked.output;
  // The command died of the SIGTERM; its exit code is passed through; the lock is free.
  EXPECT_EQ(holder.wait(), 128 + SIGTERM) << holder.output();
  EXPECT_NE(holder.output().find("revocation"), std::string::npos) << holder.output();
  EXPECT_TRUE(lock_children(session_, path_).empty());
}

TEST_F(CliRevoke, OnRevokeKillKillsTheCommandAndIgnoreIsNotRevocable) {
  Cli killed(dir_, cli_args("exec", server_.connect,
                            {"--on-revoke", "kill", path_, "--", "sh", "-c",
                             "trap '' TERM; echo started; exec sleep 1000"}));
  ASSERT_TRUE(wait_until([&] { return lock_children(session_, path_).size() == 1; }, kEventTimeout))
      << killed.output();
  const CliResult asked = revoke({path_});
  EXPECT_EQ(asked.exit_code, 0) << asked.output;
  EXPECT_EQ(killed.wait(), 128 + SIGKILL) << killed.output();
  EXPECT_NE(killed.output().find("killing the command"), std::string::npos) << killed.output();
  EXPECT_TRUE(lock_children(session_, path_).empty());

  Cli ignoring(dir_, cli_args("exec", server_.connect,
                              {"--on-revoke", "ignore", path_, "--", "sleep", "1000"}));
  ASSERT_TRUE(wait_until([&] { return lock_children(session_, path_).size() == 1; }, kEventTimeout))
      << ignoring.output();
  const std::string node = lock_children(session_, path_).at(0);
  EXPECT_NE(session_.get(path_ + "/" + node)->data.find("\"revocable\":false"), std::string::npos);
  const CliResult refused = revoke({path_});
  EXPECT_EQ(refused.exit_code, 77) << refused.output;
  ignoring.signal(SIGTERM);
  EXPECT_EQ(ignoring.wait(), 128 + SIGTERM) << ignoring.output();

  const CliResult both =
      run_cli(dir_, cli_args("exec", server_.connect,
                             {"--on-revoke", "ignore", "--revocable", path_, "--", "true"}));
  EXPECT_EQ(both.exit_code, 64) << both.output;
}

TEST_F(CliRevoke, ARevocableHoldReleasesAndExitsZero) {
  Cli holder(dir_, cli_args("hold", server_.connect, {"--revocable", path_}));
  const std::string node = node_of(holder);
  const CliResult asked = revoke({"--node", node.substr(path_.size() + 1), path_});
  EXPECT_EQ(asked.exit_code, 0) << asked.output;
  EXPECT_EQ(holder.wait(), 0) << holder.output();
  EXPECT_FALSE(session_.get(node).has_value()) << "hold exited without releasing";
}

TEST_F(CliRevoke, AHolderThatIsNotRevocableIsNotAsked) {
  Cli holder(dir_, cli_args("hold", server_.connect, {path_}));
  const std::string node = node_of(holder);
  const CliResult refused = revoke({path_});
  EXPECT_EQ(refused.exit_code, 77) << refused.output;
  EXPECT_NE(refused.output.find("does not accept revocation"), std::string::npos) << refused.output;
  // Nothing was written: the holder's identity is still there, and it still holds.
  EXPECT_NE(session_.get(node)->data.find("\"revocable\":false"), std::string::npos);
  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
}

TEST_F(CliRevoke, NobodyToAskIs66) {
  const CliResult free_lock = revoke({path_});
  EXPECT_EQ(free_lock.exit_code, 66) << free_lock.output;
  EXPECT_NE(free_lock.output.find("nobody holds " + path_), std::string::npos) << free_lock.output;
  Cli holder(dir_, cli_args("hold", server_.connect, {"--revocable", path_}));
  node_of(holder);
  const CliResult no_such = revoke({"--node", "_c_nobody-lock-0000000099", path_});
  EXPECT_EQ(no_such.exit_code, 66) << no_such.output;
  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
}

TEST_F(CliRevoke, OnASemaphoreTheLeaseHoldersAreAsked) {
  std::mutex mutex;
  std::vector<std::string> heard;  // the lease nodes asked, as their holder heard of it
  SemaphoreOptions options;
  options.on_revocation_requested = [&](const Acquisition& lease) {
    std::lock_guard lock(mutex);
    heard.push_back(lease.node_path);
  };
  Semaphore sem(session_, path_, 3, options);
  std::vector<Lease> leases = sem.acquire(2);
  const std::string first = leases[0].acquisition().node_path;
  const std::string first_name = first.substr(first.rfind('/') + 1);
  const auto heard_count = [&] {
    std::lock_guard lock(mutex);
    return heard.size();
  };
  const CliResult one = revoke({"--node", first_name, path_});
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("asked " + first_name + " to let go"), std::string::npos) << one.output;
  ASSERT_TRUE(wait_until([&] { return heard_count() == 1; }, kEventTimeout));
  const CliResult all = revoke({path_});
  EXPECT_EQ(all.exit_code, 0) << all.output;
  ASSERT_TRUE(wait_until([&] { return heard_count() == 3; }, kEventTimeout)) << all.output;
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(std::count(heard.begin(), heard.end(), first), 2) << "the named lease, then all";
  }
  for (const auto& lease : leases) EXPECT_EQ(lease.state(), LockState::kHeld);
  leases.clear();
  const CliResult none = revoke({path_});
  EXPECT_EQ(none.exit_code, 66) << none.output;
}

TEST_F(CliRevoke, WithCredentialsNobodyElseMayAsk) {
  const std::string base = unique_path("revoke-acl");
  session_.create(base, {}, CreateMode::kPersistent, true);  // open, like the shared ancestors
  const std::string path = base + "/job";
  Cli holder(dir_,
             cli_args("hold", server_.connect, {"--user", "app:secret", "--revocable", path}));
  const std::string node = node_of(holder);
  const CliResult intruder = run_cli(dir_, cli_args("revoke", server_.connect, {path}));
  EXPECT_EQ(intruder.exit_code, 77) << intruder.output;
  EXPECT_NE(session_.get(node)->data.find("\"revocable\":true"), std::string::npos)
      << "the intruder's request was written";
  const CliResult owner =
      run_cli(dir_, cli_args("revoke", server_.connect, {"--user", "app:secret", path}));
  EXPECT_EQ(owner.exit_code, 0) << owner.output;
  EXPECT_EQ(holder.wait(), 0) << holder.output();
}

}  // namespace
}  // namespace zklock::testing
