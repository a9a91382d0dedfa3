// QueueView (src/lock/queue_view.h) without a server: what a listing teaches it, what it forgets
// and when, and whom a waiter is sent to next - the guarantee a waiter relies on: every node that
// existed when the last listing was answered and is not known deleted is in the view.
#include "lock/queue_view.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace zklock::detail {
namespace {

// A sorted listing of zklock nodes with these sequences.
std::vector<ListedContender> listing(const std::vector<std::int32_t>& sequences) {
  std::vector<ListedContender> out;
  for (const std::int32_t s : sequences) {
    char sequence[16];
    std::snprintf(sequence, sizeof sequence, "%010d", s);
    const std::string name =
        "_c_6f1c2e1e-0b4a-4c7d-9d55-1b2f3a4c5d6e-lock-" + std::string(sequence);
    const auto parsed = parse_contender_name(name);
    EXPECT_TRUE(parsed) << name;
    if (parsed) out.push_back({name, *parsed});
  }
  sort_by_sequence(out);
  return out;
}

// The sequence of the node nearest below `sequence` (-1: none), and whether it is first.
std::pair<std::int32_t, bool> below(const QueueView& view, std::int32_t sequence) {
  bool first = false;
  const auto next = view.nearest_below(sequence, first);
  return {next ? next->parsed.sequence : -1, first};
}

TEST(QueueViewTest, AWaiterIsSentToTheNearestNodeBelowAndToldWhenItIsFirst) {
  QueueView view;
  view.use_generation(1);
  view.merge(listing({3, 5, 8, 9}));
  EXPECT_EQ(below(view, 9), std::make_pair(8, false));
  EXPECT_EQ(below(view, 5), std::make_pair(3, true));
  EXPECT_EQ(below(view, 3), std::make_pair(-1, true));  // nothing ahead: first
  view.erase(8);                                        // its deletion seen
  EXPECT_EQ(below(view, 9), std::make_pair(5, false));
  EXPECT_EQ(view.count_below(9), 2u);
}

TEST(QueueViewTest, ALaterListingForgetsEveryNodeItNoLongerShows) {
  QueueView view;
  view.use_generation(1);
  view.merge(listing({1, 2, 3, 10, 11}));
  // 2, 3 and 11 were listed before, so they existed before this listing was answered: not in it,
  // they were deleted - above its highest sequence too. 12 is new.
  view.merge(listing({1, 10, 12}));
  EXPECT_EQ(below(view, 10), std::make_pair(1, true));
  EXPECT_EQ(below(view, 12), std::make_pair(10, false));
  EXPECT_EQ(view.size(), 3u);
  // An empty listing: everything listed before it is gone.
  view.merge({});
  EXPECT_EQ(view.size(), 0u);
}

TEST(QueueViewTest, ANewGenerationStartsEmptyAndUnreliableSequencesAreNeverErased) {
  QueueView view;
  view.use_generation(1);
  view.merge(listing({4, 6}));
  view.use_generation(1);  // the same generation: kept
  EXPECT_EQ(view.size(), 2u);
  view.use_generation(2);
  EXPECT_EQ(view.size(), 0u);
  EXPECT_EQ(view.generation(), 2u);
  view.merge(listing({7}));
  view.erase(1 << 30);  // such numbers may repeat (ZooKeeper 3.8.0 saturates): not one node's
  EXPECT_EQ(view.size(), 1u);
}

TEST(QueueViewTest, OwnersAreFoundFromTheNodeAheadAndOnlyWhileTheyLive) {
  QueueView view;
  view.use_generation(1);
  view.merge(listing({2, 4, 6}));
  auto attempt = std::make_shared<int>(42);
  view.claim(4, attempt);
  view.claim(5, attempt);  // not in the view: nothing to claim
  EXPECT_EQ(view.owner_above(2), attempt);
  EXPECT_TRUE(view.owned(4));
  EXPECT_FALSE(view.owned(6));
  EXPECT_EQ(view.owner_above(4), nullptr);  // 6 is nobody's of ours
  view.merge(listing({2, 4, 6}));           // a merge keeps what it knows of a node
  EXPECT_TRUE(view.owned(4));
  attempt.reset();
  EXPECT_FALSE(view.owned(4)) << "an owner that is gone owns nothing";
  EXPECT_EQ(view.owner_above(2), nullptr);
}

}  // namespace
}  // namespace zklock::detail
