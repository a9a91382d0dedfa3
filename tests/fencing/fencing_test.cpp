// tests/fencing/fencing_test.cpp: fencing a shared resource against stale lock holders.
//
//  * Mutex::commit_fenced against a real server: applied while held; all or nothing; refused with
//    LockLostError (nothing written) when not held or when the lock node was deleted by someone
//    else.
//  * The SQLite counter of examples/fenced (no ZooKeeper): refuses an older token, accepts an
//    equal or newer one.
//  * The czxid token keeps growing when the lock's parent is re-created, while sequence numbers
//    restart (the reason docs/fencing.md gives for not using the sequence as a token).
//  * The example programs as processes: several incrementing at once lose no update; and the
//    stale-holder story - a holder frozen (SIGSTOP) between acquiring and writing until the server
//    expires its session, a second process taking over and writing, the first thawed - ends with
//    the late write refused, the new holder's value kept, and the refusal reported (exit status 3).
//
// All ZooKeeper tests use one server started by this binary with tickTime 200 ms, so that a 2 s
// session timeout is granted and expires promptly (also when ZKLOCK_TEST_CONNECT names a server
// whose bounds we do not know).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sqlite_fenced_store.h"
#include "support/files.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

using examples::FencedCounterStore;

constexpr int kExitRefused = 3;  // examples/fenced/example_options.h

std::vector<std::string> read_lines(const std::string& path) { return lines_of(read_file(path)); }

// The number after "acquired " on the first such line of the log, if there is one yet.
std::optional<std::int64_t> acquired_token(const std::string& log) {
  for (const auto& line : read_lines(log)) {
    if (line.rfind("acquired ", 0) == 0) return std::stoll(line.substr(9));
  }
  return std::nullopt;
}

struct Write {
  std::int64_t value;
  std::int64_t token;
};

// Every "wrote <value> with token <token>" line of the log.
std::vector<Write> writes_in(const std::string& log) {
  static const std::regex re(R"(^wrote (\d+) with token (\d+)$)");
  std::vector<Write> out;
  for (const auto& line : read_lines(log)) {
    std::smatch m;
    if (std::regex_match(line, m, re)) out.push_back({std::stoll(m[1]), std::stoll(m[2])});
  }
  return out;
}

bool log_has_line(const std::string& log, const std::string& wanted) {
  return has_line(read_file(log), wanted);
}

// "exited with 3" etc., or "still running" - for assertion messages.
std::string describe(const std::optional<int>& status) {
  return status ? describe_wait_status(*status) : std::string("still running");
}

bool exited_with(const std::optional<int>& status, int code) {
  return status && WIFEXITED(*status) && WEXITSTATUS(*status) == code;
}

// =============================================================================================
// The SQLite store alone.

TEST(SqliteFencedStoreTest, RefusesOlderTokensAndAcceptsEqualOrNewerOnes) {
  TempDir dir("zklock-fencing-");
  const std::string db = dir.file("counter.db");
  FencedCounterStore store(db);
  EXPECT_EQ(store.read().value, 0);
  EXPECT_EQ(store.read().token, 0);

  auto r = store.increment(FencingToken(100, 0));
  EXPECT_TRUE(r.applied);
  EXPECT_EQ(r.state.value, 1);
  EXPECT_EQ(r.state.token, 100);

  r = store.increment(FencingToken(99, 0));  // an older holder
  EXPECT_FALSE(r.applied);
  EXPECT_EQ(r.state.value, 1) << "the refusal reports the stored row";
  EXPECT_EQ(r.state.token, 100);
  EXPECT_EQ(store.read().value, 1) << "a refused write changes nothing";

  r = store.increment(FencingToken(100, 0));  // the same holder writing again
  EXPECT_TRUE(r.applied);
  EXPECT_EQ(r.state.value, 2);

  // A second connection (as another process would have) with a newer token takes over; the first
  // connection's token is now stale there too: the check is in the database, not in the object.
  FencedCounterStore other(db);
  r = other.increment(FencingToken(150, 0));
  EXPECT_TRUE(r.applied);
  EXPECT_EQ(r.state.value, 3);
  EXPECT_EQ(r.state.token, 150);
  r = store.increment(FencingToken(100, 0));
  EXPECT_FALSE(r.applied);
  EXPECT_EQ(r.state.token, 150);

  // An unfenced write is a caller bug, not something to let through.
  EXPECT_THROW(store.increment(FencingToken()), std::invalid_argument);
  EXPECT_EQ(store.read().value, 3);
  EXPECT_EQ(store.read().token, 150);
}

TEST(SqliteFencedStoreTest, ReopeningKeepsTheCounter) {
  TempDir dir("zklock-fencing-");
  const std::string db = dir.file("counter.db");
  { FencedCounterStore(db).increment(FencingToken(7, 0)); }
  FencedCounterStore again(db);  // must not reset the row
  EXPECT_EQ(again.read().value, 1);
  EXPECT_EQ(again.read().token, 7);
}

// =============================================================================================
// Against a real server.

// One server for the binary (both suites below), started on first use.
class FencingTest : public ::testing::Test {
 protected:
  static std::string connect() {
    static const std::unique_ptr<ZkServer> server = start_fast_expiry_server();
    return server->connect_string();
  }
};

// commit_fenced with a counter node under the lock's parent, and the lock held (or not).
class CommitFencedTest : public FencingTest {
 protected:
  CommitFencedTest() { session_.create(counter_, "0", CreateMode::kPersistent, true); }

  Session session_{options_for(connect())};
  const std::string base_ = unique_path("fenced");
  const std::string counter_ = base_ + "/counter";
  const std::string marker_ = base_ + "/marker";
  Mutex mutex_{session_, base_ + "/lock"};
};

TEST_F(CommitFencedTest, AppliesAllWritesWhileHeld) {
  std::lock_guard<Mutex> hold(mutex_);
  FencedWrite w;
  w.set(counter_, "1", 0).create(marker_, "m");
  mutex_.commit_fenced(w);

  auto counter = session_.get(counter_);
  ASSERT_TRUE(counter);
  EXPECT_EQ(counter->data, "1");
  EXPECT_EQ(counter->stat.version, 1);
  EXPECT_TRUE(session_.get(marker_));
}

TEST_F(CommitFencedTest, IsAllOrNothingWhenAWriteFails) {
  std::lock_guard<Mutex> hold(mutex_);
  FencedWrite w;
  w.create(marker_, "m").set(counter_, "1", /*version=*/5);  // wrong version
  try {
    mutex_.commit_fenced(w);
    FAIL() << "a set with a wrong version must fail";
  } catch (const LockLostError& e) {
    FAIL() << "the lock is held; the failure is the version, got LockLostError: " << e.what();
  } catch (const Error& e) {
    EXPECT_EQ(e.errc(), Errc::bad_version) << e.what();
  }
  EXPECT_FALSE(session_.get(marker_)) << "the create before the failing set must not be applied";
  EXPECT_EQ(session_.get(counter_)->stat.version, 0);
}

TEST_F(CommitFencedTest, WithoutTheLockThrowsLockLostAndWritesNothing) {
  FencedWrite w;
  w.set(counter_, "1");
  EXPECT_THROW(mutex_.commit_fenced(w), LockLostError) << "never locked";
  mutex_.lock();
  mutex_.unlock();
  EXPECT_THROW(mutex_.commit_fenced(w), LockLostError) << "released";
  EXPECT_EQ(session_.get(counter_)->stat.version, 0);
}

TEST_F(CommitFencedTest, AfterTheLockNodeWasDeletedThrowsLockLostAndWritesNothing) {
  Session someone_else(options_for(connect()));
  std::lock_guard<Mutex> hold(mutex_);
  const auto acquisition = mutex_.acquisition();
  ASSERT_TRUE(acquisition);

  // An administrator (or a buggy peer) deletes our lock node: the lock is no longer ours although
  // our session is fine, and the next contender may take it.
  ASSERT_TRUE(someone_else.remove(acquisition->node_path));

  FencedWrite w;
  w.set(counter_, "1", 0).create(marker_, "m");
  EXPECT_THROW(mutex_.commit_fenced(w), LockLostError);

  const auto counter = session_.get(counter_);
  ASSERT_TRUE(counter);
  EXPECT_EQ(counter->data, "0");
  EXPECT_EQ(counter->stat.version, 0);
  EXPECT_FALSE(session_.get(marker_));
}

// lock_state.h: "Lost: the session is Lost (or our node was deleted)" - also for a holder that
// was first in line at its first listing.
TEST_F(FencingTest, DeletedLockNodeMakesTheHoldLost) {
  Session s(options_for(connect()));
  Session someone_else(options_for(connect()));
  Mutex mutex(s, unique_path("node-deleted-state"));
  std::lock_guard<Mutex> hold(mutex);
  ASSERT_TRUE(someone_else.remove(mutex.acquisition()->node_path));
  EXPECT_TRUE(mutex.wait_lost_for(10s)) << "state: " << mutex.state();
}

// docs/fencing.md: the sequence number restarts when the lock's parent is re-created; the czxid
// token does not.
TEST_F(FencingTest, TokenGrowsWhenTheParentIsRecreatedAndSequenceNumbersRestart) {
  Session s(options_for(connect()));
  const std::string path = unique_path("recreated") + "/lock";
  Mutex mutex(s, path);
  auto take = [&] {
    std::lock_guard<Mutex> hold(mutex);
    return *mutex.acquisition();
  };
  auto wait_empty = [&] {
    // unlock() deletes our node in the background: wait for it before deleting the parent.
    return wait_until(
        [&] {
          auto kids = s.children(path);
          return kids && kids->empty();
        },
        10s);
  };

  std::vector<Acquisition> first_life;
  for (int i = 0; i < 3; ++i) first_life.push_back(take());
  ASSERT_TRUE(wait_empty());
  ASSERT_TRUE(s.remove(path));  // as the server does with an empty container parent

  const Acquisition later = take();
  EXPECT_EQ(later.sequence, first_life.front().sequence)
      << "a new parent restarts sequence numbers";
  EXPECT_LT(later.sequence, first_life.back().sequence)
      << "the later holder has a SMALLER sequence than an earlier one";
  for (const auto& earlier : first_life) {
    EXPECT_GT(later.token(), earlier.token()) << "the czxid token still orders the holders";
  }
  ASSERT_TRUE(wait_empty());
}

// ---- The example programs as processes. -------------------------------------------------------

struct Example {
  const char* name;
  const char* binary;
};

// The resource each example writes: the SQLite file, or the counter znode.
class Counter {
 public:
  virtual ~Counter() = default;
  virtual std::vector<std::string> args() const = 0;  // how the example is told where it is
  virtual std::int64_t value() = 0;
};

class SqliteCounter : public Counter {
 public:
  explicit SqliteCounter(std::string db) : db_(std::move(db)) {}
  std::vector<std::string> args() const override { return {"--db", db_}; }
  std::int64_t value() override { return FencedCounterStore(db_).read().value; }
  std::int64_t token() { return FencedCounterStore(db_).read().token; }

 private:
  std::string db_;
};

class ZnodeCounter : public Counter {
 public:
  ZnodeCounter(const std::string& connect, std::string path)
      : session_(options_for(connect)), path_(std::move(path)) {}
  std::vector<std::string> args() const override { return {"--counter", path_}; }
  std::int64_t value() override {
    auto node = session_.get(path_);
    return node ? std::stoll(node->data) : -1;
  }
  std::optional<NodeData> node() { return session_.get(path_); }

 private:
  Session session_;
  std::string path_;
};

std::vector<std::string> example_argv(const char* binary, const std::string& connect,
                                      const std::string& lock_path, const Counter& counter,
                                      std::vector<std::string> more) {
  std::vector<std::string> argv{binary, "--connect", connect, "--path", lock_path};
  for (const auto& a : counter.args()) argv.push_back(a);
  for (auto& a : more) argv.push_back(std::move(a));
  return argv;
}

// Several processes increment at once; every increment must land exactly once, and - the lock
// handing out increasing tokens in lock order - the values in lock order carry increasing tokens.
void expect_no_lost_update(const char* binary, const std::string& connect,
                           const std::string& lock_path, Counter& counter, const TempDir& dir) {
  constexpr int kProcesses = 3;
  constexpr int kIterations = 25;
  std::vector<std::unique_ptr<ChildProcess>> procs;
  std::vector<std::string> logs;
  for (int i = 0; i < kProcesses; ++i) {
    logs.push_back(dir.file("worker" + std::to_string(i) + ".log"));
    procs.push_back(
        std::make_unique<ChildProcess>(example_argv(binary, connect, lock_path, counter,
                                                    {"--iterations", std::to_string(kIterations)}),
                                       SpawnOptions{logs.back(), {}, {}}));
  }
  std::vector<Write> all;
  for (int i = 0; i < kProcesses; ++i) {
    const auto status = procs[i]->wait_exit(120s);
    ASSERT_TRUE(exited_with(status, 0)) << "worker " << i << ": " << describe(status) << "\n"
                                        << tail_file(logs[i]);
    const auto w = writes_in(logs[i]);
    EXPECT_EQ(w.size(), static_cast<std::size_t>(kIterations)) << tail_file(logs[i]);
    all.insert(all.end(), w.begin(), w.end());
  }
  EXPECT_EQ(counter.value(), kProcesses * kIterations);

  std::sort(all.begin(), all.end(),
            [](const Write& a, const Write& b) { return a.value < b.value; });
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kProcesses * kIterations));
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].value, static_cast<std::int64_t>(i + 1))
        << "each value is written exactly once";
    if (i > 0) {
      EXPECT_GT(all[i].token, all[i - 1].token)
          << "value " << all[i].value << " has an older token";
    }
  }
}

TEST_F(FencingTest, ConcurrentSqliteCountersLoseNoUpdate) {
  TempDir dir("zklock-fencing-");
  SqliteCounter counter(dir.file("counter.db"));
  expect_no_lost_update(FENCED_COUNTER_BIN, connect(), unique_path("sqlite-concurrent"), counter,
                        dir);
  EXPECT_GT(counter.token(), 0);
}

TEST_F(FencingTest, ConcurrentZnodeCountersLoseNoUpdate) {
  TempDir dir("zklock-fencing-");
  const std::string lock_path = unique_path("znode-concurrent");
  ZnodeCounter counter(connect(), lock_path + "-value");
  expect_no_lost_update(ZNODE_COUNTER_BIN, connect(), lock_path, counter, dir);
}

// The stale-holder story (docs/fencing.md), with `binary` writing `counter`:
//   1. A acquires (token tA) and stops before writing: it waits for a trigger file.
//   2. A is frozen (SIGSTOP): it sends nothing, so the server expires its 2 s session and deletes
//      its lock node.
//   3. B, queued behind A, acquires (tB > tA), writes 1, exits.
//   4. The trigger is created and A thawed: A writes with tA - and the resource refuses it.
// Returns tA and tB; checks the exit statuses and that A wrote nothing.
struct StoryResult {
  std::int64_t token_a = 0;
  std::int64_t token_b = 0;
  std::string log_a;
};

void run_stale_holder_story(const char* binary, const std::string& connect, Counter& counter,
                            const TempDir& dir, StoryResult& out) {
  const std::string lock_path = unique_path("stale");
  const std::string trigger = dir.file("go");
  out.log_a = dir.file("a.log");
  const std::string log_b = dir.file("b.log");

  ChildProcess a(
      example_argv(binary, connect, lock_path, counter,
                   {"--iterations", "1", "--session-timeout", "2000", "--hold-until", trigger}),
      SpawnOptions{out.log_a, {}, {}});
  // A prints this line once it holds the lock, has read what it needs, and only polls for the
  // trigger file, which does not exist yet: wherever in that loop the freeze lands, A has nothing
  // left to ask the server and cannot write before the thaw.
  ASSERT_TRUE(wait_until([&] { return log_has_line(out.log_a, "waiting for " + trigger); }, 30s))
      << "A never got to the write:\n"
      << tail_file(out.log_a);
  a.freeze();
  ASSERT_TRUE(acquired_token(out.log_a)) << tail_file(out.log_a);
  out.token_a = *acquired_token(out.log_a);

  ChildProcess b(example_argv(binary, connect, lock_path, counter, {"--iterations", "1"}),
                 SpawnOptions{log_b, {}, {}});
  // B can only get the lock once the server has expired A's session (about 2 s after the freeze).
  const auto status_b = b.wait_exit(60s);
  ASSERT_TRUE(exited_with(status_b, 0)) << "B: " << describe(status_b) << "\n" << tail_file(log_b);
  const auto b_writes = writes_in(log_b);
  ASSERT_EQ(b_writes.size(), 1u) << tail_file(log_b);
  out.token_b = b_writes[0].token;
  EXPECT_EQ(b_writes[0].value, 1);
  EXPECT_GT(out.token_b, out.token_a) << "the new holder's token is newer";
  EXPECT_EQ(counter.value(), 1);
  ASSERT_TRUE(a.running()) << "A must still be frozen, not dead";

  write_file(trigger, "");
  a.thaw();
  const auto status_a = a.wait_exit(60s);
  EXPECT_TRUE(exited_with(status_a, kExitRefused)) << "A: " << describe(status_a) << "\n"
                                                   << tail_file(out.log_a);
  EXPECT_TRUE(writes_in(out.log_a).empty()) << tail_file(out.log_a);
  EXPECT_EQ(counter.value(), 1) << "the stale holder's write must not land";
}

TEST_F(FencingTest, FrozenHolderWriteIsRefusedBySqliteToken) {
  TempDir dir("zklock-fencing-");
  SqliteCounter counter(dir.file("counter.db"));
  StoryResult r;
  ASSERT_NO_FATAL_FAILURE(run_stale_holder_story(FENCED_COUNTER_BIN, connect(), counter, dir, r));
  EXPECT_EQ(counter.token(), r.token_b) << "the table keeps the new holder's token";
  const std::string expected = "write refused: token " + std::to_string(r.token_a) +
                               " is older than " + std::to_string(r.token_b);
  EXPECT_TRUE(log_has_line(r.log_a, expected)) << "expected \"" << expected << "\" in:\n"
                                               << tail_file(r.log_a);
}

TEST_F(FencingTest, FrozenHolderWriteIsRefusedByCommitFenced) {
  TempDir dir("zklock-fencing-");
  const std::string counter_path = unique_path("stale-counter");
  ZnodeCounter counter(connect(), counter_path);
  StoryResult r;
  ASSERT_NO_FATAL_FAILURE(run_stale_holder_story(ZNODE_COUNTER_BIN, connect(), counter, dir, r));
  const auto node = counter.node();
  ASSERT_TRUE(node);
  EXPECT_EQ(node->stat.version, 1) << "only B's set was applied";
  bool reported = false;
  for (const auto& line : read_lines(r.log_a)) {
    if (line.rfind("write refused: ", 0) == 0) reported = true;
  }
  EXPECT_TRUE(reported) << tail_file(r.log_a);
}

}  // namespace
}  // namespace zklock::testing
