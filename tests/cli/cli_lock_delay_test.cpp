// tests/cli/cli_lock_delay_test.cpp: `zklock exec --lock-delay` between real processes - a
// holder killed with SIGKILL, and a holder frozen (SIGSTOP) until its session expired and then
// thawed: the waiter does not run its command until the delay has passed since the holder's node
// went, and the thawed holder has stopped its command and exited before the waiter's starts.
//
// Evidence, not timing of zklock's speed: one event log that every process appends to (its line
// order is the order of events), and lower bounds - the waiter's command cannot have run earlier
// than the delay after the moment the test ended the holder.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "cli_process.h"
#include "support/files.h"
#include "support/process.h"
#include "support/wait.h"
#include "test_env.h"

namespace zklock::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Longer than the holder's session can take to expire after it went silent (4 s, counted by the
// server in 2 s ticks): a waiter that skipped the delay would run its command well before it.
constexpr std::chrono::seconds kDelay{8};
const std::string kDelayArg = "8s";

// Milliseconds since `from` (a figure a failure message can show).
long long ms_since(Clock::time_point from) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - from).count();
}
constexpr long long kDelayMs = std::chrono::milliseconds(kDelay).count();

class CliLockDelay : public CliTest {
 protected:
  std::string events() const { return dir_.file("events"); }

  // A holder's zklock, started by a shell that appends "a-exited STATUS" to the event log the
  // moment it exits; the command records its pid, then "a-started", then sleeps.
  ChildProcess start_holder() {
    SpawnOptions options;
    options.log_path = dir_.file("a.log");
    options.extra_env = {"EVENTS=" + events(), "DIR=" + dir_.path()};
    return ChildProcess(
        {"/bin/sh", "-c",
         "\"$@\" & echo $! > \"$DIR/zklock.pid\"; wait $!; echo \"a-exited $?\" >> \"$EVENTS\"",
         "sh", kCli, "exec", "--connect", server_.connect, "--session-timeout", "4s",
         "--lock-delay", kDelayArg, path_, "--", "sh", "-c",
         "echo $$ > \"$DIR/command.pid\"; echo a-started >> \"$EVENTS\"; exec sleep 1000"},
        options);
  }
  pid_t pid_in(const std::string& name) const { return std::stoi(read_file(dir_.file(name))); }

  // The waiter, started once `holder` runs its command, returned once it is queued behind it; it
  // runs its command (which records "b-acquired") once it holds the lock. A test failure if
  // either does not happen.
  Cli start_waiter(const ChildProcess& holder) {
    EXPECT_TRUE(wait_until([&] { return read_file(events()) == "a-started\n"; }, kEventTimeout))
        << tail_file(holder.log_path());
    Cli waiter(dir_,
               cli_args("exec", server_.connect,
                        {"--lock-delay", kDelayArg, path_, "--", "sh", "-c",
                         "echo b-acquired >> \"$EVENTS\""}),
               {"EVENTS=" + events()});
    if (!wait_until([&] { return lock_children(session_, path_).size() == 2; }, kEventTimeout)) {
      ADD_FAILURE() << "the waiter did not queue: " << waiter.output();
    }
    return waiter;
  }
};

TEST_F(CliLockDelay, AKilledHoldersWaiterRunsOnlyAfterTheDelay) {
  ChildProcess holder = start_holder();
  Cli waiter = start_waiter(holder);
  ASSERT_FALSE(HasFailure());

  const auto killed = Clock::now();
  ASSERT_EQ(::kill(pid_in("zklock.pid"), SIGKILL), 0);
  ::kill(pid_in("command.pid"), SIGKILL);  // the orphaned command: not under test
  EXPECT_EQ(waiter.wait(), 0) << waiter.output();
  // The node went when the server expired the session, after the kill; the delay after that.
  EXPECT_GE(ms_since(killed), kDelayMs) << waiter.output();
  EXPECT_EQ(lines_of(read_file(events())),
            (std::vector<std::string>{"a-started", "a-exited 137", "b-acquired"}));
}

TEST_F(CliLockDelay, AFrozenHolderThawedAfterItsSessionExpiredStopsBeforeTheWaiterRuns) {
  ChildProcess holder = start_holder();
  Cli waiter = start_waiter(holder);
  ASSERT_FALSE(HasFailure());

  const auto frozen = Clock::now();
  ASSERT_EQ(::kill(pid_in("zklock.pid"), SIGSTOP), 0);
  // The server expires the frozen holder's session: only the waiter's node is left.
  ASSERT_TRUE(
      wait_until([&] { return lock_children(session_, path_).size() == 1; }, kEventTimeout));
  ASSERT_EQ(::kill(pid_in("zklock.pid"), SIGCONT), 0);
  // Thawed, the holder finds its session silent past its timeout: Lost, its command stopped,
  // exit 76 - within the delay, before the waiter is handed the lock.
  EXPECT_EQ(waiter.wait(), 0) << waiter.output();
  EXPECT_GE(ms_since(frozen), kDelayMs) << waiter.output();
  ASSERT_TRUE(wait_until([&] { return lines_of(read_file(events())).size() == 3; }, kEventTimeout))
      << tail_file(holder.log_path());
  EXPECT_EQ(lines_of(read_file(events())),
            (std::vector<std::string>{"a-started", "a-exited 76", "b-acquired"}))
      << tail_file(holder.log_path());
}

}  // namespace
}  // namespace zklock::testing
