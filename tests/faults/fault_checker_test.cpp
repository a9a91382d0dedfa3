// tests/faults/fault_checker_test.cpp: the fault suite's fenced store and checker on their own,
// with no ZooKeeper server (the unit tier): the store accepts only equal or newer tokens, and each
// rule of the checker (fault_checker.h) fails on a run that breaks it - so the checker can fail
// on a real run.
#include "fault_checker.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "fenced_store.h"
#include "support/temp_dir.h"

namespace zklock::testing::faults {
namespace {

TEST(FencedStoreTest, AcceptsEqualOrNewerTokensOnlyOverTheSocket) {
  TempDir dir;
  auto store = FencedStore::start(dir.file("s.sock"), dir.file("s.log"));
  FencedStoreClient a(store->socket_path()), b(store->socket_path());
  EXPECT_TRUE(a.write("a", 10, 1).accepted);
  EXPECT_TRUE(a.write("a", 10, 2).accepted);  // equal: the same holder writing again
  EXPECT_TRUE(b.write("b", 12, 1).accepted);
  const auto stale = a.write("a", 10, 3);
  EXPECT_FALSE(stale.accepted);
  EXPECT_EQ(stale.newest, 12);
  EXPECT_EQ(store->accepted(), 3u);
  EXPECT_EQ(store->rejected(), 1u);
  // The log file says the same as memory.
  const auto from_file = read_store_log(dir.file("s.log"));
  ASSERT_EQ(from_file.size(), 4u);
  EXPECT_EQ(from_file[3].writer, "a");
  EXPECT_FALSE(from_file[3].accepted);
  EXPECT_EQ(from_file[3].newest, 12);
  // CLOCK_MONOTONIC is steady_clock: one clock for the holders' logs and the test.
  const auto diff = monotonic_ns() - to_ns(std::chrono::steady_clock::now());
  EXPECT_LT(std::llabs(diff), 50'000'000LL);
}

// Builds holder logs and store records by hand for the checker's own tests.
struct Synthetic {
  std::vector<StoreRecord> store;
  std::map<std::string, HolderLog> logs;
  std::vector<FaultRecord> faults;
  std::map<std::string, std::int64_t> next_n;

  void event(const std::string& holder, std::int64_t at, const std::string& kind,
             std::map<std::string, std::string> fields = {}) {
    auto& log = logs[holder];
    log.id = holder;
    log.events.push_back({at, kind, std::move(fields)});
  }
  void acquire(const std::string& h, std::int64_t at, std::int64_t token) {
    event(h, at, "acquired", {{"token", std::to_string(token)}});
  }
  void told_lost(const std::string& h, std::int64_t at, std::int64_t token) {
    event(h, at, "lock_state", {{"state", "Lost"}, {"token", std::to_string(token)}});
  }
  void release(const std::string& h, std::int64_t at) {
    event(h, at, "released", {{"state", "Held"}});
  }
  // A write attempted at `t0` and decided by the store at `decided`.
  void write(const std::string& h, std::int64_t t0, std::int64_t decided, std::int64_t token,
             bool late = false) {
    const std::int64_t n = ++next_n[h];
    event(h, t0, "write_attempt",
          {{"n", std::to_string(n)}, {"token", std::to_string(token)}, {"late", late ? "1" : "0"}});
    std::int64_t newest = 0;
    for (const auto& r : store) {
      if (r.accepted) newest = std::max(newest, r.token);
    }
    StoreRecord r{decided, h, token, n, token >= newest, std::max(newest, token)};
    store.push_back(r);
  }
  // An uneventful hold: acquired at `from`, one write attempted at `write_at` (decided just
  // after), released at `to`.
  void hold(const std::string& h, std::int64_t from, std::int64_t token, std::int64_t write_at,
            std::int64_t to) {
    acquire(h, from, token);
    write(h, write_at, write_at + 1, token);
    release(h, to);
  }
  CheckReport check() const {
    std::vector<HolderLog> v;
    for (const auto& [id, log] : logs) v.push_back(log);
    return check_run(store, v, faults);
  }
};

TEST(FaultCheckerTest, ACleanHandoverHasNoViolation) {
  Synthetic s;
  s.hold("a", 100, 5, 110, 120);
  s.acquire("b", 130, 7);
  s.write("b", 140, 141, 7);
  s.told_lost("b", 150, 7);
  s.acquire("c", 200, 9);  // after b was told
  s.write("c", 210, 211, 9);
  s.release("c", 220);
  s.event("b", 160, "gave_up", {{"reason", "lost"}});
  const auto r = s.check();
  EXPECT_TRUE(r.violations.empty()) << r.describe();
  EXPECT_EQ(r.holds, 3u);
  EXPECT_EQ(r.holds_lost, 1u);
  ASSERT_EQ(r.told_lead_ns.size(), 1u);
  EXPECT_EQ(r.told_lead_ns[0], 50);
}

// A short pause the holder survives, then a long one during which someone else takes over: the
// writes between the two pauses are the holder's own (found by the randomised run, seed
// 3384812367: the checker once blamed the takeover on the first pause).
TEST(FaultCheckerTest, OnlyThePauseDuringWhichSomeoneTookOverIsLosing) {
  Synthetic s;
  s.acquire("a", 100, 5);
  s.write("a", 110, 111, 5);
  s.faults.push_back({200, "freeze", "a", ""});  // short: survived
  s.faults.push_back({250, "thaw", "a", ""});
  s.write("a", 260, 261, 5);                     // still the holder: must be accepted, no violation
  s.faults.push_back({300, "freeze", "a", ""});  // long: b takes over meanwhile
  s.acquire("b", 400, 7);
  s.write("b", 410, 411, 7);
  s.faults.push_back({500, "thaw", "a", ""});
  s.event("a", 510, "gave_up", {{"reason", "lost"}});
  s.told_lost("a", 510, 5);
  s.release("b", 600);
  const auto clean = s.check();
  EXPECT_TRUE(clean.violations.empty()) << clean.describe();
  EXPECT_EQ(clean.holds_paused_out, 1u);
  // The same story, but a write of a's after the long pause gets through: that is caught.
  Synthetic bad = s;
  bad.write("a", 505, 506, 5);
  bad.store.back().accepted = true;
  const auto caught = bad.check();
  EXPECT_FALSE(caught.violations.empty()) << caught.describe();
}

// Each rule can fail: a run that breaks it is caught (the rule named in the test).

// Two holders: b acquires before a is told it lost.
TEST(FaultCheckerTest, TwoHoldersIsCaught) {
  Synthetic s;
  s.acquire("a", 100, 5);
  s.acquire("b", 150, 7);
  s.told_lost("a", 160, 5);
  s.release("b", 170);
  EXPECT_TRUE(s.check().has("two-holders")) << s.check().describe();
}

// A later acquisition with an older token.
TEST(FaultCheckerTest, AnOlderTokenAfterANewerIsCaught) {
  Synthetic s;
  s.acquire("a", 100, 9);
  s.release("a", 110);
  s.acquire("b", 120, 7);
  s.release("b", 130);
  EXPECT_TRUE(s.check().has("token-not-increasing"));
}

// The store accepting an older token after a newer one (a broken store).
TEST(FaultCheckerTest, AStoreAcceptingAnOlderTokenIsCaught) {
  Synthetic s;
  s.acquire("a", 100, 5);
  s.write("a", 101, 102, 5);
  s.store.push_back({103, "a", 3, 99, true, 5});
  s.event("a", 101, "write_attempt", {{"n", "99"}, {"token", "3"}, {"late", "0"}});
  s.release("a", 110);
  EXPECT_TRUE(s.check().has("token-order"));
}

// A holder that keeps writing after it was told Lost (--ignore-lost).
TEST(FaultCheckerTest, WritingAfterBeingToldLostIsCaught) {
  Synthetic s;
  s.acquire("a", 100, 5);
  s.told_lost("a", 150, 5);
  s.write("a", 160, 161, 5);
  s.event("a", 170, "released", {{"state", "Lost"}});
  EXPECT_TRUE(s.check().has("write-after-end"));
}

// A holder refused while it held: the store had a newer token (--stale-token).
TEST(FaultCheckerTest, ARefusalWhileHoldingIsCaught) {
  Synthetic s;
  s.hold("b", 50, 7, 55, 60);
  s.acquire("a", 100, 9);
  s.write("a", 110, 111, 5);  // written with an old token
  s.release("a", 120);
  EXPECT_TRUE(s.check().has("refused-while-holding"));
}

// Paused past expiry: its write after the thaw is accepted, and it never learns.
TEST(FaultCheckerTest, APausedHoldersAcceptedWriteIsCaught) {
  Synthetic s;
  s.acquire("a", 100, 5);
  s.faults.push_back({200, "freeze", "a", ""});
  s.acquire("b", 300, 7);
  s.faults.push_back({400, "thaw", "a", ""});
  s.store.push_back({410, "a", 5, 1, true, 5});  // a store that forgot b's token
  s.event("a", 150, "write_attempt", {{"n", "1"}, {"token", "5"}, {"late", "0"}});
  s.release("a", 420);
  s.release("b", 430);
  const auto r = s.check();
  EXPECT_TRUE(r.has("paused-write-accepted")) << r.describe();
  EXPECT_TRUE(r.has("never-learned-lost")) << r.describe();
  EXPECT_FALSE(r.has("two-holders")) << "a frozen holder is not 'inside'";
}

// A late write with an old token that got through; an accepted write after a takeover.
TEST(FaultCheckerTest, LateAndStaleWritesAreCaught) {
  Synthetic s;
  s.acquire("a", 100, 5);
  s.write("a", 110, 111, 5);
  s.told_lost("a", 150, 5);
  s.event("a", 151, "gave_up", {{"reason", "lost"}});
  s.write("a", 160, 161, 5, /*late=*/true);
  s.acquire("b", 200, 7);
  s.write("a", 140, 210, 5);  // attempted while held, decided after b acquired
  s.release("b", 250);
  const auto r = s.check();
  EXPECT_TRUE(r.has("late-write-accepted")) << r.describe();
  EXPECT_TRUE(r.has("stale-write-after-takeover")) << r.describe();
}

// A hold with no end; Held after Lost; a write the store saw but the holder never logged.
TEST(FaultCheckerTest, UnendedHoldsHeldAfterLostAndUnloggedWritesAreCaught) {
  Synthetic s;
  s.acquire("a", 100, 5);
  s.told_lost("a", 110, 5);
  s.event("a", 120, "lock_state", {{"state", "Held"}, {"token", "5"}});
  s.acquire("b", 130, 7);
  s.store.push_back({140, "b", 7, 42, true, 7});
  const auto r = s.check();
  EXPECT_TRUE(r.has("held-after-lost")) << r.describe();
  EXPECT_TRUE(r.has("hold-never-ended")) << r.describe();
  EXPECT_TRUE(r.has("unlogged-write")) << r.describe();
}

TEST(FaultCheckerTest, ParsesLogsAndSkipsAHalfWrittenLastLine) {
  const auto events = parse_log("10 start id=x pid=1\n20 acquired token=5 seq=0\n30 write_att");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, "acquired");
  EXPECT_EQ(events[1].num("token"), 5);
  EXPECT_EQ(events[1].num("missing", -1), -1);
}

}  // namespace
}  // namespace zklock::testing::faults
