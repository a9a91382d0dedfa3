// Lock node names and uuids without a server: the protected name, finding our own nodes after a
// lost create reply, and uuids that do not repeat.
#include "lock_node_name.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "random_uuid.h"

namespace zklock::detail {
namespace {

// Review 3, item 18: lease names are ordered by their sequence as a signed number, as lock nodes
// are: negative numbers (ZooKeeper's printf of a wrapped cversion) sort by value, not as text.
TEST(LockNodeNameTest, LeasesAreOrderedBySignedSequence) {
  const std::vector<std::string> names = {
      "_c_b-lease-0000000012",  "_c_a-lease--2147483000", "_c_c-lease-0000000003",
      "_c_d-lease--2147482000", "_c_e-lease--000000007",
  };
  EXPECT_EQ(leases_in_order(names),
            (std::vector<std::string>{"_c_a-lease--2147483000", "_c_d-lease--2147482000",
                                      "_c_e-lease--000000007", "_c_c-lease-0000000003",
                                      "_c_b-lease-0000000012"}));
}

TEST(LockNodeNameTest, ProtectedPrefixIsCuratorsForm) {
  EXPECT_EQ(lock_node_prefix("abc"), "_c_abc-lock-");
}

TEST(LockNodeNameTest, OwnNodesAreFoundByUuidLowestFirst) {
  const std::string uuid = "6f1c2e1e-0b4a-4c7d-9d55-1b2f3a4c5d6e";
  const std::vector<std::string> children = {
      "_c_" + uuid + "-lock-0000000012",
      "_c_other-lock-0000000003",
      "_c_" + uuid + "-lock-0000000007",
      "_c_" + uuid + "-lock-junk",  // not a contender
      "x__lock__0000000001",
      "_c_" + uuid + "x-lock-0000000002",  // another uuid that starts the same
  };
  EXPECT_EQ(own_nodes(children, uuid),
            (std::vector<std::string>{"_c_" + uuid + "-lock-0000000007",
                                      "_c_" + uuid + "-lock-0000000012"}));
  EXPECT_TRUE(own_nodes(children, "absent").empty());
}

TEST(RandomUuidTest, Version4VariantAndForm) {
  for (int i = 0; i < 1000; ++i) {
    const std::string u = random_uuid();
    ASSERT_EQ(u.size(), 36u) << u;
    EXPECT_EQ(u[8], '-');
    EXPECT_EQ(u[13], '-');
    EXPECT_EQ(u[18], '-');
    EXPECT_EQ(u[23], '-');
    EXPECT_EQ(u[14], '4') << u;
    EXPECT_NE(std::string("89ab").find(u[19]), std::string::npos) << u;
  }
}

TEST(RandomUuidTest, NoRepeatsAcrossThreads) {
  constexpr int kThreads = 8, kEach = 20000;
  std::vector<std::vector<std::string>> made(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) made[t].push_back(random_uuid());
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  for (const auto& v : made) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kThreads * kEach));
}

}  // namespace
}  // namespace zklock::detail
