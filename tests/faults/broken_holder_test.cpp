// tests/faults/broken_holder_test.cpp: holders that break the lock's rules on purpose - one that
// ignores Lost, one that writes with a stale token - run through the fault suite's trial runner
// (trial.h), and the checker (fault_checker.h) must report each violation: the suite's clean
// verdicts can fail. Part of fault_suite_test's binary.
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "fault_checker.h"
#include "support/files.h"
#include "trial.h"

namespace zklock::testing::faults {
namespace {

using namespace std::chrono_literals;

// Broken holders: the checker must catch them (and so can fail on a real run). One trial each,
// judged by the test (stop_and_check) instead of required clean (finish).

class FaultSuiteBrokenHolder : public ::testing::Test {
 protected:
  const std::unique_ptr<Trial> trial_ = standalone_trial();
  Trial& run_ = *trial_;
};

TEST_F(FaultSuiteBrokenHolder, CheckerCatchesAHolderThatIgnoresLost) {
  auto& h = run_.spawn("H", true,
                       {"--ignore-lost", "--hold-until-signal", "--write-pause-ms", "20",
                        "--rounds", "1", "--linger"});
  ASSERT_TRUE(run_.wait_acquired(h, 20s));
  auto& w = run_.spawn("W", false, kHoldOnce);
  ASSERT_TRUE(run_.wait_children(2, 20s));
  run_.blackhole(h, "until-takeover");
  ASSERT_TRUE(run_.wait_acquired(w, 3 * kT + 10s));
  // It keeps writing; once the new holder has written, the fence refuses it.
  ASSERT_TRUE(run_.wait_log(
      h,
      [](const HolderLog& l) {
        return l.first_at("write_result", {{"result", "rejected"}}).has_value();
      },
      10s));
  // Stop both (finish() expects a clean run; this one must not be), then check the logs.
  run_.heal(h);
  const CheckReport r = run_.stop_and_check("broken holder (--ignore-lost)");
  EXPECT_TRUE(r.has("write-after-end")) << r.describe();
  EXPECT_GT(r.rejected, 0u);
  EXPECT_FALSE(r.has("two-holders")) << "it was told; it just did not listen";
  print_line(reliability_line("broken_ignore_lost", 1, run_.faults().injected(), r,
                              "expected_violations=yes"));
}

TEST_F(FaultSuiteBrokenHolder, CheckerCatchesAHolderWritingWithAStaleToken) {
  auto& a = run_.spawn("A", false,
                       {"--stale-token", "--hold-until-signal", "--write-pause-ms", "20",
                        "--rounds", "2", "--linger"});
  ASSERT_TRUE(run_.wait_acquired(a, 20s));
  auto& b = run_.spawn("B", false, {"--rounds", "1", "--writes", "2", "--linger"});
  ASSERT_TRUE(run_.wait_children(2, 20s));
  a.process->signal(SIGUSR1);  // A releases, B takes over and writes, A queues again
  ASSERT_TRUE(run_.wait_released(b, 20s));
  ASSERT_TRUE(run_.wait_log(
      a, [](const HolderLog& l) { return l.of("gave_up").size() == 1; }, 20s))
      << "A's second hold did not end with its write refused\n"
      << read_file(a.log_path);
  const CheckReport r = run_.stop_and_check("broken holder (--stale-token)");
  EXPECT_TRUE(r.has("refused-while-holding")) << r.describe();
  EXPECT_EQ(r.violations.size(), 1u) << "only the stale write is wrong in this run";
  print_line(reliability_line("broken_stale_token", 1, 0, r, "expected_violations=yes"));
}

}  // namespace
}  // namespace zklock::testing::faults
