// tests/unit/contender_name_test.cpp: which children of a lock path are contenders, and their
// queue order (include/zklock/contender.h), without a server. The names are those ZooKeeper,
// zklock, Curator and kazoo write ("%010d" sequence numbers, negative ones past the top of the
// counter) and those nobody of them writes.
#include <gtest/gtest.h>

#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "zklock/contender.h"

namespace zklock {
namespace {

constexpr const char* kUuid = "_c_7b3f2a94-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

// The parsed name, as "<naming> <sequence>" (or "not a contender"), for readable expectations.
std::string parsed(const std::string& name) {
  const auto p = parse_contender_name(name);
  if (!p) return "not a contender";
  const char* naming = p->naming == NodeNaming::kProtected ? "protected"
                       : p->naming == NodeNaming::kPlain   ? "plain"
                                                           : "kazoo";
  return std::string(naming) + " " + std::to_string(p->sequence);
}

TEST(ContenderNameTest, ParsesZklockAndCuratorProtectedNames) {
  EXPECT_EQ(parsed(std::string(kUuid) + "-lock-0000000042"), "protected 42");
  EXPECT_EQ(parsed(std::string(kUuid) + "-lock-0000000000"), "protected 0");
}

TEST(ContenderNameTest, ParsesPlainLockNames) {
  EXPECT_EQ(parsed("worker-lock-0000000007"), "plain 7");
  EXPECT_EQ(parsed("-lock-0000000001"), "plain 1");
}

TEST(ContenderNameTest, ParsesCuratorLeaderLatchNamesAsExclusive) {
  EXPECT_EQ(parsed(std::string(kUuid) + "-latch-0000000005"), "protected 5");
  EXPECT_EQ(parsed("latch-0000000003"), "not a contender");  // no '-' before the marker
  EXPECT_EQ(parsed("x-latch--000000005"), "plain -5");
  EXPECT_EQ(parse_contender_name(std::string(kUuid) + "-latch-0000000005")->kind,
            ContenderKind::kExclusive);
  // In one queue with lock names, by the number alone.
  EXPECT_EQ(
      queue_order({"b-lock-0000000002", "a-latch-0000000001", "c-latch-0000000003"}),
      (std::vector<std::string>{"a-latch-0000000001", "b-lock-0000000002", "c-latch-0000000003"}));
}

TEST(ContenderNameTest, ParsesKazooNames) {
  EXPECT_EQ(parsed("0123456789abcdef0123456789abcdef__lock__0000000999"), "kazoo 999");
}

TEST(ContenderNameTest, ParsesBothEndsOfTheSignedRange) {
  EXPECT_EQ(parsed("x-lock-2147483647"), "plain 2147483647");
  // Past the top, ZooKeeper formats the wrapped (negative) counter: "%010d" of -5.
  EXPECT_EQ(parsed(std::string(kUuid) + "-lock--000000005"), "protected -5");
  EXPECT_EQ(parsed("x-lock--2147483648"), "plain " + std::to_string(INT32_MIN));
  EXPECT_EQ(parsed("k__lock__-000000001"), "kazoo -1");
}

TEST(ContenderNameTest, TheLastMarkerCounts) {
  EXPECT_EQ(parsed("a-lock-0000000001-lock-0000000002"), "plain 2");
  EXPECT_EQ(parsed("a-lock-0000000001__lock__0000000003"), "kazoo 3");
}

TEST(ContenderNameTest, RefusesNamesThatAreNotContenders) {
  for (const std::string name :
       {"", "lock", "no-sequence", "x-lock-", "x-lock-12", "x-lock-00000000001",
        "x-lock-9999999999", "x-lock--9999999999", "x-lock-2147483648", "x-lock--2147483649",
        "x-lock-+000000001", "x-lock-00000000x1", "x-lock-0000000001 ", "x__lock__123",
        "lock-0000000001", "x-LOCK-0000000001", "0000000001"}) {
    EXPECT_EQ(parsed(name), "not a contender") << "'" << name << "'";
  }
  EXPECT_EQ(parsed(std::string(100000, 'n')), "not a contender");
  const std::string nul_among_digits = std::string("x-lock-000000") + '\0' + "001";
  ASSERT_EQ(nul_among_digits.size(), 17U);
  EXPECT_EQ(parsed(nul_among_digits), "not a contender");
}

// Only what printf("%010d") writes is a sequence number (found by the fuzz target): a name whose
// suffix merely parses as a number was chosen by someone else, and must not queue.
TEST(ContenderNameTest, RefusesSuffixesZooKeeperNeverWrites) {
  EXPECT_FALSE(parse_contender_name("_c_b-lock--0969260123"));  // would be "-969260123"
  EXPECT_FALSE(parse_contender_name("x-lock--000000000"));      // zero is "0000000000"
  EXPECT_FALSE(parse_contender_name("x-lock--0000000001"));     // would be "-000000001"
  EXPECT_FALSE(parse_contender_name("k__lock__-000000000"));
  EXPECT_EQ(parse_contender_name("x-lock--969260123")->sequence, -969260123);
  EXPECT_EQ(parse_contender_name("x-lock--000000001")->sequence, -1);
  EXPECT_EQ(parse_contender_name("k__lock__-000000001")->sequence, -1);
}

TEST(ContenderNameTest, RecognisesReadWriteLockNodesOfCuratorAndKazoo) {
  EXPECT_TRUE(
      is_read_write_lock_node("_c_2d1e0000-0000-4000-8000-000000000000-__READ__0000000007"));
  EXPECT_TRUE(
      is_read_write_lock_node("_c_2d1e0000-0000-4000-8000-000000000000-__WRIT__0000000008"));
  EXPECT_TRUE(is_read_write_lock_node("__READ__-000000001"));
  EXPECT_TRUE(is_read_write_lock_node("0123abcd__rlock__0000000009"));
  // Not read/write lock nodes: mutex contenders (kazoo's WriteLock is named as its Lock), junk.
  for (const std::string name :
       {"_c_2d1e0000-0000-4000-8000-000000000000-lock-0000000001", "0123abcd__lock__0000000002",
        "__READ__", "__WRIT__12", "__rlock__00000000x1", "x__READ__0000000001 ", ""}) {
    EXPECT_FALSE(is_read_write_lock_node(name)) << "'" << name << "'";
  }
}

TEST(ContenderNameTest, ReadWriteLockNodesAreContendersOfTheirKind) {
  const auto kind = [](const std::string& name) -> std::string {
    const auto p = parse_contender_name(name);
    if (!p) return "not a contender";
    const char* k = p->kind == ContenderKind::kRead    ? "read"
                    : p->kind == ContenderKind::kWrite ? "write"
                                                       : "exclusive";
    return std::string(k) + " " + parsed(name);
  };
  EXPECT_EQ(kind(std::string(kUuid) + "-__READ__0000000007"), "read protected 7");
  EXPECT_EQ(kind(std::string(kUuid) + "-__WRIT__0000000008"), "write protected 8");
  EXPECT_EQ(kind("reader__READ__-000000001"), "read plain -1");
  EXPECT_EQ(kind("0123abcd__rlock__0000000009"), "read kazoo 9");
  EXPECT_EQ(kind("0123abcd__lock__0000000002"), "exclusive kazoo 2");  // kazoo Lock and WriteLock
  EXPECT_EQ(kind(std::string(kUuid) + "-lock-0000000003"), "exclusive protected 3");
  EXPECT_EQ(kind("__WRIT__12"), "not a contender");
  EXPECT_TRUE(excludes_readers(ContenderKind::kWrite));
  EXPECT_TRUE(excludes_readers(ContenderKind::kExclusive));
  EXPECT_FALSE(excludes_readers(ContenderKind::kRead));
}

TEST(ContenderNameTest, QueueOrderIsBySignedSequenceNeverByText) {
  // As text "-000000001" < "0000000002" < "0000000010" would hold too, so include one that text
  // order gets wrong: "c-lock-0000000003" sorts after "b-lock-0000000010" by name.
  const std::vector<std::string> names = {"b-lock-0000000010", "c-lock-0000000003",
                                          "a-lock--000000001", "d-lock-0000000002"};
  EXPECT_EQ(queue_order(names),
            (std::vector<std::string>{"a-lock--000000001", "d-lock-0000000002", "c-lock-0000000003",
                                      "b-lock-0000000010"}));
}

TEST(ContenderNameTest, QueueOrderMixesLibrariesAndDropsTheRest) {
  const std::vector<std::string> names = {"deadbeefdeadbeefdeadbeefdeadbeef__lock__0000000005",
                                          "junk", std::string(kUuid) + "-lock-0000000004",
                                          "x-lock-12", "curator-lock-0000000006"};
  EXPECT_EQ(queue_order(names),
            (std::vector<std::string>{std::string(kUuid) + "-lock-0000000004",
                                      "deadbeefdeadbeefdeadbeefdeadbeef__lock__0000000005",
                                      "curator-lock-0000000006"}));
  EXPECT_TRUE(queue_order({"junk", "x-lock-"}).empty());
}

TEST(ContenderNameTest, QueueOrderBreaksSequenceTiesByName) {
  // Past the top of the counter ZooKeeper 3.8 gives several nodes 2147483647.
  EXPECT_EQ(queue_order({"b-lock-2147483647", "a-lock-2147483647"}),
            (std::vector<std::string>{"a-lock-2147483647", "b-lock-2147483647"}));
}

TEST(ContenderNameTest, SequenceOrderIsReliableOnlyAwayFromTheEndsOfTheRange) {
  EXPECT_TRUE(sequence_order_reliable({}));
  EXPECT_TRUE(sequence_order_reliable({"x-lock-0000000001", "x-lock-1073741823", "junk"}));
  EXPECT_TRUE(sequence_order_reliable({"x-lock--1073741824"}));
  EXPECT_FALSE(sequence_order_reliable({"x-lock-0000000001", "x-lock-1073741824"}));
  EXPECT_FALSE(sequence_order_reliable({"x-lock-2147483647"}));
  EXPECT_FALSE(sequence_order_reliable({"x-lock--1073741825"}));
  EXPECT_TRUE(sequence_order_reliable({"x-lock-9999999999"})) << "not a contender: ignored";
}

}  // namespace
}  // namespace zklock
