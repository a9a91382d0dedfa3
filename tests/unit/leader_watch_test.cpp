// may_have_missed_terms (src/election/leader_watch.h): when an observation must say that a term
// may have passed unseen between two looks at an election's queue.
#include "election/leader_watch.h"

#include <gtest/gtest.h>

namespace zklock::detail {
namespace {

using Names = std::vector<std::string>;

TEST(MayHaveMissedTermsTest, TheNextInLineTakingOverMissesNothing) {
  EXPECT_FALSE(may_have_missed_terms({"a", "b", "c"}, "a", {"b", "c"}));
  EXPECT_FALSE(may_have_missed_terms({"a", "b"}, "a", {"b", "c"}));  // c joined behind
}

TEST(MayHaveMissedTermsTest, SomeoneGoneBetweenTheOldLeaderAndTheNewOneMayHaveLed) {
  EXPECT_TRUE(may_have_missed_terms({"a", "b", "c"}, "a", {"c"}));
  EXPECT_TRUE(may_have_missed_terms({"a", "b"}, "a", {"d"}));  // d is new: b was ahead of it
}

TEST(MayHaveMissedTermsTest, SomeoneGoneBehindTheNewLeaderNeverLed) {
  EXPECT_FALSE(may_have_missed_terms({"a", "b", "c"}, "a", {"b"}));
}

TEST(MayHaveMissedTermsTest, NobodyLeadingNowMissesNothing) {
  EXPECT_FALSE(may_have_missed_terms({"a", "b"}, "a", Names{}));
}

}  // namespace
}  // namespace zklock::detail
