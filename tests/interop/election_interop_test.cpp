// Interop of elections: zklock::Election beside Apache Curator's LeaderSelector, Curator's
// LeaderLatch and python kazoo's Election, one peer library at a time, on ONE election path of a
// real server. Two participants of each library campaign over and over; while leading, each runs
// the critical section of the interop protocol (contenders.h). At most one leader at any time
// across both libraries (no VIOLATION, strictly alternating enter/exit), everyone gets every one
// of its terms, the leadership passes both ways between the libraries, and nothing of anyone's is
// left on the server.
//
// Which namings meet (docs/recipe.md, "Leader election"):
//   LeaderSelector is an InterProcessMutex: "_c_<uuid>-lock-N" nodes, as zklock's default;
//   LeaderLatch names its nodes "_c_<uuid>-latch-N" and orders only those: zklock's participants
//     use ElectionOptions::curator_latch_names on its paths;
//   kazoo's Election is a Lock ("<hex>__lock__N"), given extra_lock_patterns=["-lock-"] to see
//     zklock's nodes (kazoo_contender.py).
#include <gtest/gtest.h>

#include <string>

#include "contenders.h"
#include "event_log.h"
#include "interop_fixture.h"
#include "support/files.h"
#include "test_env.h"

namespace zklock::testing {
namespace {

// Two participants of each side campaign over and over (InteropFixture::run_mixed_exclusion with
// the elections' modes), 8 terms each.
class ElectionInteropTest : public InteropFixture {
 protected:
  static constexpr int kTerms = 8;
};

TEST_F(ElectionInteropTest, ElectionBesideCuratorLeaderSelector) {
  run_mixed_exclusion(Lib::kCurator, "selector", "election", kTerms);
}

TEST_F(ElectionInteropTest, ElectionBesideCuratorLeaderLatch) {
  run_mixed_exclusion(Lib::kCurator, "latch", "latch", kTerms);
}

TEST_F(ElectionInteropTest, ElectionBesideKazooElection) {
  run_mixed_exclusion(Lib::kKazoo, "election", "election", kTerms);
}

}  // namespace
}  // namespace zklock::testing
