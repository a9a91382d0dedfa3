// tests/cli/cli_elect_test.cpp: `zklock elect` and `zklock leader` - the real binary against a
// real ZooKeeper server: one participant runs its command while the other waits, and takes over
// when it ends; `leader` names the leader, since when it leads, who it is and its value (66 for
// nobody); --again campaigns again, also after a revocation; `leader --watch` prints every change
// until it is stopped.
#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "cli_process.h"
#include "support/files.h"
#include "support/wait.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

class CliElect : public CliTest {
 protected:
  // `zklock elect --value VALUE PATH -- sh -c 'echo VALUE >> EVENTS; exec sleep 1000'`.
  Cli participant(const std::string& value) {
    return Cli(dir_,
               cli_args("elect", server_.connect,
                        {"--value", value, path_, "--", "sh", "-c",
                         "echo " + value + " >> \"$EVENTS\"; exec sleep 1000"}),
               {"EVENTS=" + events_});
  }
  CliResult leader() { return run_cli(dir_, cli_args("leader", server_.connect, {path_})); }
  bool events_are(const std::string& expected) {
    return wait_until([&] { return read_file(events_) == expected; }, kEventTimeout);
  }
  const std::string events_ = dir_.file("events");
};

TEST_F(CliElect, OneLeadsTheOtherTakesOverWhenItsCommandEnds) {
  Cli first = participant("first");
  ASSERT_TRUE(events_are("first\n")) << first.output();
  Cli second = participant("second");
  ASSERT_TRUE(wait_until([&] { return lock_children(session_, path_).size() == 2; }, kEventTimeout))
      << second.output();
  // The first in queue order (a listing comes in no particular order). Its stamp (since=) is
  // written just after it took office: the line has it once that write has landed.
  const std::string node = path_ + "/" + queue_order(lock_children(session_, path_)).at(0);
  CliResult shown;
  ASSERT_TRUE(wait_until(
      [&] {
        shown = leader();
        return shown.output.find(" since=") != std::string::npos;
      },
      kEventTimeout))
      << shown.output;
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find(node + " since=20"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find(" host="), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find(" pid=" + std::to_string(first.pid()) + " "), std::string::npos)
      << shown.output;
  EXPECT_NE(shown.output.find(" value=\"first\"\n"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find(" 0x"), std::string::npos) << shown.output;
  EXPECT_EQ(read_file(events_), "first\n");  // the second waits

  first.signal(SIGTERM);  // forwarded: the command dies of it, the leadership passes on
  EXPECT_EQ(first.wait(), 128 + SIGTERM) << first.output();
  ASSERT_TRUE(events_are("first\nsecond\n")) << second.output();
  shown = leader();
  EXPECT_NE(shown.output.find(" value=\"second\"\n"), std::string::npos) << shown.output;
  second.signal(SIGTERM);
  EXPECT_EQ(second.wait(), 128 + SIGTERM) << second.output();
  EXPECT_TRUE(lock_children(session_, path_).empty());
}

TEST_F(CliElect, LeaderSaysWhenNobodyLeads) {
  const CliResult shown = leader();
  EXPECT_EQ(shown.exit_code, 66) << shown.output;
  EXPECT_NE(shown.output.find("nobody leads " + path_), std::string::npos) << shown.output;
}

TEST_F(CliElect, AgainCampaignsAgainAfterTheCommandEnds) {
  Cli elect(dir_,
            cli_args("elect", server_.connect,
                     {"--again", path_, "--", "sh", "-c", "echo run >> \"$EVENTS\"; exit 3"}),
            {"EVENTS=" + events_});
  ASSERT_TRUE(events_are("run\nrun\n")) << elect.output();
  elect.signal(SIGTERM);
  const int code = elect.wait();
  // Between two terms zklock exits 128 + SIGTERM; during one, the command's own 3 (it had ended).
  EXPECT_TRUE(code == 128 + SIGTERM || code == 3) << code << "\n" << elect.output();
  EXPECT_TRUE(lock_children(session_, path_).empty());
}

TEST_F(CliElect, LeaderWatchPrintsEveryChangeUntilStopped) {
  Cli watch(dir_, cli_args("leader", server_.connect, {"--watch", path_}));
  ASSERT_EQ(watch.wait_for_line(), "none");
  {
    ElectionOptions o;
    o.value = "alpha beta";  // a value with a space: the rest of the line
    Election e(session_, path_, o);
    e.campaign();
    const std::string expected = e.term().to_string() + " " + "0x";
    ASSERT_TRUE(wait_until(
        [&] {
          return watch.output().find(" value=\"alpha beta\"\n") != std::string::npos &&
                 watch.output().find(e.leadership()->node_path) != std::string::npos;
        },
        kEventTimeout))
        << watch.output();
    EXPECT_NE(watch.output().find(expected), std::string::npos) << watch.output();
    e.resign();
  }
  ASSERT_TRUE(wait_until([&] { return watch.output().find("\nnone\n") != std::string::npos; },
                         kEventTimeout))
      << watch.output();
  watch.signal(SIGTERM);
  EXPECT_EQ(watch.wait(), 0) << watch.output();
}

// A revocable leader (--on-revoke term) asked to let go: its command is stopped, the next
// participant leads, and with --again it campaigns again, behind it.
TEST_F(CliElect, ARevokedLeaderStopsItsCommandAndCampaignsAgain) {
  Cli first(dir_,
            cli_args("elect", server_.connect,
                     {"--again", "--on-revoke", "term", "--value", "first", path_, "--", "sh", "-c",
                      "echo first >> \"$EVENTS\"; exec sleep 1000"}),
            {"EVENTS=" + events_});
  ASSERT_TRUE(events_are("first\n")) << first.output();
  Cli second = participant("second");
  ASSERT_TRUE(wait_until([&] { return lock_children(session_, path_).size() == 2; }, kEventTimeout))
      << second.output();
  const std::string first_node = queue_order(lock_children(session_, path_)).at(0);
  EXPECT_NE(session_.get(path_ + "/" + first_node)->data.find("\"revocable\":true"),
            std::string::npos);

  const CliResult asked = run_cli(dir_, cli_args("revoke", server_.connect, {path_}));
  EXPECT_EQ(asked.exit_code, 0) << asked.output;
  ASSERT_TRUE(events_are("first\nsecond\n")) << first.output() << second.output();
  // Campaigned again: a new node of the first participant's, behind the second's.
  ASSERT_TRUE(wait_until(
      [&] {
        const auto queue = queue_order(lock_children(session_, path_));
        return queue.size() == 2 && queue.at(1) != first_node;
      },
      kEventTimeout))
      << first.output();
  EXPECT_NE(first.output().find("revocation"), std::string::npos) << first.output();
  second.signal(SIGTERM);
  EXPECT_EQ(second.wait(), 128 + SIGTERM) << second.output();
  ASSERT_TRUE(events_are("first\nsecond\nfirst\n")) << first.output();
  first.signal(SIGTERM);
  first.wait();
  EXPECT_TRUE(lock_children(session_, path_).empty());
}

}  // namespace
}  // namespace zklock::testing
