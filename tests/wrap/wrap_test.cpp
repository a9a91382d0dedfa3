// Wrap: zklock::Mutex contenders whose sequence numbers reach the top of ZooKeeper's signed 32-bit
// child counter (2147483647), against a real ZooKeeper 3.8 server.
//
// Getting there. The server names a sequential child after its parent's child counter, formatted
// "%010d" (PrepRequestProcessor). Nobody can create 2^31 children in a test, so the suite seeds
// the server with a snapshot in which each lock node's counter is already near 2^31 - 1
// (SeedCversion.java, built by tests.cmake; it uses the server's own DataTree and FileTxnSnapLog).
// The harness owns the server's data directory and creates it on the first start, so the fixture
// starts a server, stops it, replaces its version-2/ (the empty snapshot of that first start) with
// the seeded snapshot, and restarts it on the same port and directory: the server loads the
// seeded tree. Each test has a lock path of its own in that tree.
//
// What the server really does at the top (ZooKeeper 3.8.0, verified against the jars; the tests
// below pin it, so that a server that behaves otherwise is noticed):
//  * The counter is the parent's *persisted* cversion, which counts child creates only; deletes
//    do not consume numbers. (The Stat.cversion a client reads is 2 * creates - numChildren, i.e.
//    creates + deletes, which is not the next number - and overflows on its own.)
//  * DataTree.createNode only ever raises the counter ("if (parentCVersion > cversion)"), so
//    2147483647 + 1 = -2147483648 is never stored: the counter SATURATES at 2147483647 (despite
//    the programmer's guide, which says it wraps). Every create after it, one at a time, is
//    numbered 2147483647 again.
//  * Negative numbers appear only for a create prepared while an earlier create on the same parent
//    is still in flight (PrepRequestProcessor then reads the outstanding change record, which does
//    hold the wrapped value): two creates in one multi, or contenders arriving together. Once they
//    commit, the next create is numbered 2147483647 again - a larger number, created later.
//  * The server's own digest check disagrees with itself there: from the create numbered
//    2147483647 on, server.log shows "Digests are not matching" for every create (the digest was
//    computed for the wrapped counter, the tree kept 2147483647). Expected, not a seeding fault.
// So past the top, sequence numbers are neither unique nor in creation order. The creation order
// is the czxid order (zxids grow with every write), which is what these tests check the queue
// against. They check the lock's promises, not particular numbers: creation order (FIFO), never
// two holders, fencing tokens that grow, nothing left behind.
#include <sys/wait.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/environment.h"
#include "support/four_letter_words.h"
#include "support/process.h"
#include "support/raw_zk_client.h"
#include "test_env.h"
#include "zklock/zklock.h"

#ifndef ZKLOCK_WRAP_MISSING
#define ZKLOCK_WRAP_MISSING "wrap suite: not configured by tests/wrap/tests.cmake"
#define ZKLOCK_WRAP_JAVA ""
#define ZKLOCK_WRAP_CLASSPATH ""
#define ZKLOCK_WRAP_SEEDER_CLASS_FILE ""
#endif

namespace zklock::testing {
namespace {

namespace fs = std::filesystem;

constexpr std::int32_t kTop = INT32_MAX;  // 2147483647

// Lock paths and the counters the seeded snapshot gives them.
const std::string kProbePath = "/wrap/probe";  // counter 2147483645
const std::string kFifoPath = "/wrap/fifo";    // counter 2147483645
const std::string kTiePath = "/wrap/tie";      // counter 2147483647
const std::string kMultiPath = "/wrap/multi";  // counter 2147483647
constexpr std::int32_t kProbeStart = kTop - 2;
constexpr std::int32_t kFifoStart = kTop - 2;

// Generous: a failing test is bounded by them, a passing one never waits for them.
constexpr auto kGrantLimit = 10s;
constexpr auto kSeedLimit = 60s;

// ---------------------------------------------------------------------------------------------
// The seeded server, shared by the suite.

// Runs SeedCversion on `data_dir` (the server must be stopped). Throws with its output on failure.
void seed_snapshot(const std::string& data_dir, const std::vector<std::string>& specs) {
  const std::string log = (fs::path(data_dir).parent_path() / "seed.log").string();
  std::vector<std::string> argv = {ZKLOCK_WRAP_JAVA, "-cp",    ZKLOCK_WRAP_CLASSPATH,
                                   "SeedCversion",   data_dir, "0x1000"};
  argv.insert(argv.end(), specs.begin(), specs.end());
  SpawnOptions spawn;
  spawn.log_path = log;
  ChildProcess seeder(argv, spawn);
  const auto status = seeder.wait_exit(kSeedLimit);
  if (!status || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    throw std::runtime_error("SeedCversion " +
                             (status ? describe_wait_status(*status) : std::string("timed out")) +
                             "; output:\n" + tail_file(log));
  }
  std::cout << "[wrap] " << tail_file(log);
}

class WrapTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setup_error_.clear();
    if (!std::string(ZKLOCK_WRAP_MISSING).empty()) return;
    if (!fs::exists(ZKLOCK_WRAP_SEEDER_CLASS_FILE) || !fs::exists(ZKLOCK_WRAP_JAVA)) {
      setup_error_ = std::string("broken build: seeder class or java missing: ") +
                     ZKLOCK_WRAP_SEEDER_CLASS_FILE + " / " + ZKLOCK_WRAP_JAVA;
      return;
    }
    try {
      server_ = ZkServer::start();
      // The first start created the data directory (with an empty snapshot at zxid 0). Replace
      // its version-2/ by the seeded snapshot and start again on the same port and directory.
      server_->stop();
      fs::remove_all(fs::path(server_->data_dir()) / "version-2");
      seed_snapshot(server_->data_dir(), {kProbePath + "=" + std::to_string(kProbeStart),
                                          kFifoPath + "=" + std::to_string(kFifoStart),
                                          kTiePath + "=" + std::to_string(kTop),
                                          kMultiPath + "=" + std::to_string(kTop)});
      server_->restart();
    } catch (const std::exception& e) {
      setup_error_ = e.what();
      server_.reset();
    }
  }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    if (const std::string missing = ZKLOCK_WRAP_MISSING; !missing.empty()) {
      if (prerequisites_required("ZKLOCK_WRAP_REQUIRED")) {
        FAIL() << missing << " (required: CI or ZKLOCK_WRAP_REQUIRED is set)";
      }
      GTEST_SKIP() << missing;
    }
    ASSERT_TRUE(server_) << "seeded server: " << setup_error_;
  }

  static std::string connect() { return server_->connect_string(); }
  static int port() { return server_->port(); }

  static std::unique_ptr<ZkServer> server_;
  static std::string setup_error_;
};

std::unique_ptr<ZkServer> WrapTest::server_;
std::string WrapTest::setup_error_;

// ---------------------------------------------------------------------------------------------
// Helpers

std::int32_t sequence_of(const std::string& name) {
  auto parsed = parse_contender_name(name);
  if (!parsed) throw std::runtime_error("not a contender name: " + name);
  return parsed->sequence;
}

std::string describe(const std::vector<Contender>& cs) {
  std::string out;
  for (const auto& c : cs) {
    out += "\n    " + c.name + "  seq " + std::to_string(c.sequence) + "  czxid 0x";
    char hex[20];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(c.czxid));
    out += hex;
  }
  return out;
}

// Nothing of the test's contenders is left on the server: no node under `path`, no watch.
void expect_nothing_left(Session& s, int port, const std::string& path) {
  EXPECT_TRUE(wait_until([&] { return lock_children(s, path).empty(); }, 5s))
      << "nodes left under " << path << ": " << ::testing::PrintToString(lock_children(s, path));
  EXPECT_TRUE(wait_until([&] { return watches_under(port, path).empty(); }, 5s))
      << "a watch was left behind: " << four_letter_word(port, "wchp");
}

// A raw ZooKeeper C client session (not zklock), connected, for nodes zklock cannot make.
std::unique_ptr<RawZkClient> connected_raw_client(const std::string& connect) {
  auto client = std::make_unique<RawZkClient>(connect);
  if (!client->wait_connected(15s)) {
    throw std::runtime_error("raw client did not connect to " + connect);
  }
  return client;
}

// ---------------------------------------------------------------------------------------------
// The seed, and the server's numbering at the top (pinned: the other tests' scenarios rest on it).

TEST_F(WrapTest, ServerNumbersFromTheSeededCounterAndSaturatesAtTheTop) {
  Session s(options_for(connect()));
  Mutex m(s, kProbePath);
  std::vector<std::int32_t> sequences;
  std::vector<std::int64_t> czxids;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(m.try_lock_for(5s));
    sequences.push_back(m.acquisition()->sequence);
    czxids.push_back(m.acquisition()->czxid);
    m.unlock();
    // One create at a time: the next starts after this node is gone on the server.
    ASSERT_TRUE(wait_until([&] { return lock_children(s, kProbePath).empty(); }, 5s));
  }
  std::cout << "[wrap] one-at-a-time sequences: " << ::testing::PrintToString(sequences)
            << "  czxids " << ::testing::PrintToString(czxids) << "\n";
  // The seed took: the first child is numbered from the seeded counter (deletes take no number).
  ASSERT_EQ(sequences[0], kProbeStart) << "the seeded counter is not in effect";
  // 3.8.0 keeps 2147483647 instead of wrapping to -2147483648 (DataTree only raises the counter).
  // Should this fail with [.., 2147483647, -2147483648, -2147483647], the server wraps: the other
  // tests still hold, but the file comment and the findings behind it need a new look.
  EXPECT_EQ(sequences, (std::vector<std::int32_t>{kTop - 2, kTop - 1, kTop, kTop, kTop}));
  EXPECT_TRUE(std::is_sorted(czxids.begin(), czxids.end()) &&
              std::adjacent_find(czxids.begin(), czxids.end()) == czxids.end())
      << "czxids must grow with every create: " << ::testing::PrintToString(czxids);
  expect_nothing_left(s, port(), kProbePath);
}

// ---------------------------------------------------------------------------------------------
// A holder just below the top, waiters queued one at a time across it.

// One contender: its own Session and Mutex, lock() on a thread of its own.
struct Party {
  std::string label;
  std::unique_ptr<Session> session;
  std::unique_ptr<Mutex> mutex;
  std::string node;  // its lock node's name, seen on the server
  std::int32_t sequence = 0;
  std::int64_t czxid = 0;
  std::thread thread;
  std::atomic<bool> acquired{false}, released{false}, failed{false};
  std::string error;  // set before `failed`
};

TEST_F(WrapTest, ContendersQueuedAcrossTheTopAreServedInCreationOrder) {
  const std::string path = kFifoPath;
  // The holder is numbered 2147483645; W1 2147483646, W2 2147483647, and every later waiter is
  // created past the top. On 3.8.0 those are all numbered 2147483647 again (a wrapping server
  // would give W3 -2147483648, W4 -2147483647, ...). Six waiters rather than four: five of them
  // then share one number, so a queue that does not keep creation order among them gets it right
  // by chance only once in 5! = 120 runs.
  constexpr int kWaiters = 6;
  Session observer(options_for(connect()));

  std::atomic<int> inside{0}, overlaps{0};
  std::mutex grants_mutex;
  std::vector<int> grants;  // party indexes in the order lock() returned (the holder excluded)

  std::vector<std::unique_ptr<Party>> parties;  // [0] is the holder H, then W1..W6
  auto make_party = [&](const std::string& label) {
    auto p = std::make_unique<Party>();
    p->label = label;
    p->session = std::make_unique<Session>(options_for(connect()));
    p->mutex = std::make_unique<Mutex>(*p->session, path);
    parties.push_back(std::move(p));
    return parties.back().get();
  };
  auto cleanup = [&] {
    for (auto& p : parties) {
      p->mutex->cancel();
      if (p->thread.joinable()) p->thread.join();
      if (p->acquired && !p->released) {
        inside.fetch_sub(1);
        p->released = true;
        p->mutex->unlock();
      }
    }
  };
  struct Cleanup {
    std::function<void()> f;
    ~Cleanup() { f(); }
  } cleanup_at_exit{cleanup};

  // H takes the lock.
  Party* holder = make_party("H");
  ASSERT_TRUE(holder->mutex->try_lock_for(5s));
  inside.fetch_add(1);
  holder->acquired = true;
  holder->node = holder->mutex->acquisition()->node_path.substr(path.size() + 1);
  holder->sequence = holder->mutex->acquisition()->sequence;
  holder->czxid = holder->mutex->acquisition()->czxid;
  ASSERT_EQ(holder->sequence, kFifoStart) << "the seeded counter is not in effect";

  // W1..W6 queue one at a time: each one's node exists before the next starts.
  for (int i = 1; i <= kWaiters; ++i) {
    const auto before = lock_children(observer, path);
    Party* w = make_party("W" + std::to_string(i));
    const int index = i;
    w->thread = std::thread([&, w, index] {
      try {
        w->mutex->lock();
        if (inside.fetch_add(1) != 0) ++overlaps;
        {
          std::lock_guard lock(grants_mutex);
          grants.push_back(index);
        }
        w->acquired = true;
      } catch (const std::exception& e) {
        w->error = e.what();
        w->failed = true;
      }
    });
    std::vector<std::string> now;
    ASSERT_TRUE(wait_until(
        [&] {
          now = lock_children(observer, path);
          return now.size() == before.size() + 1;
        },
        kGrantLimit))
        << w->label << "'s node did not appear";
    for (const auto& name : now) {
      if (std::find(before.begin(), before.end(), name) == before.end()) w->node = name;
    }
    auto data = observer.get(path + "/" + w->node);
    ASSERT_TRUE(data) << w->node;
    w->sequence = sequence_of(w->node);
    w->czxid = data->stat.czxid;
    ASSERT_FALSE(w->acquired) << w->label << " acquired while H holds the lock";
  }
  for (const auto& p : parties) {
    std::cout << "[wrap] " << p->label << ": " << p->node << "  seq " << p->sequence << "  czxid "
              << p->czxid << "\n";
  }

  // The numbers run up to the top and past it: W1, W2 just below, the later ones created after
  // the counter reached 2147483647 (numbered 2147483647 again on 3.8.0; negative if it wrapped).
  EXPECT_EQ(parties[1]->sequence, kTop - 1);
  EXPECT_EQ(parties[2]->sequence, kTop);
  for (int i = 3; i <= kWaiters; ++i) {
    EXPECT_TRUE(parties[i]->sequence == kTop || parties[i]->sequence < 0)
        << parties[i]->label << " numbered " << parties[i]->sequence;
  }
  // Creation order is czxid order (one at a time, each seen before the next started).
  for (int i = 1; i <= kWaiters; ++i) ASSERT_GT(parties[i]->czxid, parties[i - 1]->czxid);

  // contenders() lists them in creation order.
  std::vector<std::string> created;
  for (const auto& p : parties) created.push_back(p->node);
  const auto listed = holder->mutex->contenders();
  std::vector<std::string> listed_names;
  for (const auto& c : listed) listed_names.push_back(c.name);
  EXPECT_EQ(listed_names, created) << "contenders() in queue order:" << describe(listed);

  // Hand-over: release the holder, then each grantee in turn. Every waiter must be granted in
  // creation order, one at a time, with a fencing token above its predecessor's.
  std::vector<std::string> grant_labels;
  std::vector<std::int64_t> tokens = {holder->mutex->fencing_token().value()};
  std::vector<std::int32_t> grant_sequences;
  inside.fetch_sub(1);
  holder->released = true;
  holder->mutex->unlock();
  for (std::size_t n = 0; n < static_cast<std::size_t>(kWaiters); ++n) {
    int next = -1;
    const bool granted = wait_until(
        [&] {
          std::lock_guard lock(grants_mutex);
          if (grants.size() <= n) return false;
          next = grants[n];
          return true;
        },
        kGrantLimit);
    if (!granted) {
      std::string waiting;
      for (const auto& p : parties) {
        if (!p->acquired)
          waiting += " " + p->label + (p->failed ? "(failed: " + p->error + ")" : "");
      }
      ADD_FAILURE() << "no grant within " << kGrantLimit.count() << " s after " << n
                    << " hand-overs; still waiting:" << waiting
                    << "\n  queue now:" << describe(parties[0]->mutex->contenders());
      break;
    }
    Party& p = *parties[static_cast<std::size_t>(next)];
    const auto acq = p.mutex->acquisition();
    ASSERT_TRUE(acq) << p.label;
    EXPECT_EQ(acq->czxid, p.czxid) << p.label;
    EXPECT_EQ(acq->sequence, p.sequence) << p.label;
    grant_labels.push_back(p.label);
    tokens.push_back(p.mutex->fencing_token().value());
    grant_sequences.push_back(acq->sequence);
    inside.fetch_sub(1);
    p.released = true;
    p.mutex->unlock();
  }
  std::cout << "[wrap] grant order: " << ::testing::PrintToString(grant_labels) << "  sequences "
            << ::testing::PrintToString(grant_sequences) << "\n";

  std::vector<std::string> expected;
  for (int i = 1; i <= kWaiters; ++i) expected.push_back("W" + std::to_string(i));
  EXPECT_EQ(grant_labels, expected) << "not first come, first served across the top";
  EXPECT_EQ(overlaps.load(), 0) << "two holders at once";
  EXPECT_TRUE(std::is_sorted(tokens.begin(), tokens.end()) &&
              std::adjacent_find(tokens.begin(), tokens.end()) == tokens.end())
      << "fencing tokens (H first, then in grant order) must grow: "
      << ::testing::PrintToString(tokens);
  for (const auto& p : parties) EXPECT_FALSE(p->failed) << p->label << ": " << p->error;

  cleanup();
  expect_nothing_left(observer, port(), path);
}

// ---------------------------------------------------------------------------------------------
// Exclusion when numbers repeat at the top (zklock contenders only).

TEST_F(WrapTest, ContenderNumberedLikeTheHolderIsNotGrantedTheLock) {
  const std::string path = kTiePath;  // counter 2147483647: every lock node is numbered 2147483647
  Session hs(options_for(connect())), cs(options_for(connect()));
  Mutex holder(hs, path);
  // A holder whose name ("_c_<uuid>-lock-2147483647") sorts in the upper half of the uuid space:
  // then each later contender, numbered the same, sorts ahead of it by name with a chance of at
  // least 1/2, and the 64 tries below cannot all miss by luck (< 2^-64). Lock nodes are numbered
  // by creates only, so re-taking the lock keeps the number at 2147483647.
  std::string holder_node;
  for (int i = 0; i < 64; ++i) {
    ASSERT_TRUE(holder.try_lock_for(5s));
    holder_node = holder.acquisition()->node_path.substr(path.size() + 1);
    if (holder_node.size() > 3 && holder_node[3] >= '8') break;
    holder.unlock();
  }
  ASSERT_TRUE(holder.owns_lock());
  ASSERT_GE(holder_node[3], '8') << holder_node;
  ASSERT_EQ(holder.acquisition()->sequence, kTop) << holder_node;

  int granted_try = -1;
  std::string granted_node;
  std::int32_t granted_sequence = 0;
  for (int i = 0; i < 64 && granted_try < 0; ++i) {
    Mutex challenger(cs, path);
    if (challenger.try_lock()) {
      granted_try = i;
      granted_node = challenger.acquisition()->node_path.substr(path.size() + 1);
      granted_sequence = challenger.acquisition()->sequence;
      EXPECT_EQ(holder.state(), LockState::kHeld) << "the holder noticed nothing";
      challenger.unlock();
    }
  }
  EXPECT_EQ(granted_try, -1) << "try_lock #" << granted_try + 1 << " (" << granted_node << ", seq "
                             << granted_sequence << ") was granted the lock while " << holder_node
                             << " held it: two holders";
  holder.unlock();
  expect_nothing_left(hs, port(), path);
}

// ---------------------------------------------------------------------------------------------
// Exclusion against an older contender that the server numbered -2147483648.

TEST_F(WrapTest, LaterContenderDoesNotJumpAheadOfAWrappedOlderOne) {
  const std::string path = kMultiPath;  // counter 2147483647
  // Another process queues twice in one multi (as two contenders arriving together would): the
  // second create is prepared while the first is in flight and is numbered -2147483648. Names in
  // zklock's (Curator's protected) form, so every recipe counts them as lock contenders.
  const auto other = connected_raw_client(connect());
  const std::string first_prefix = path + "/_c_00000000-0000-4000-8000-000000000001-lock-";
  const std::string second_prefix = path + "/_c_00000000-0000-4000-8000-000000000002-lock-";
  char first_path[512] = {}, second_path[512] = {};
  zoo_op_t ops[2];
  zoo_op_result_t results[2];
  zoo_create_op_init(&ops[0], first_prefix.c_str(), "other", 5, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_EPHEMERAL | ZOO_SEQUENCE, first_path, sizeof first_path);
  zoo_create_op_init(&ops[1], second_prefix.c_str(), "other", 5, &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_EPHEMERAL | ZOO_SEQUENCE, second_path, sizeof second_path);
  ASSERT_EQ(zoo_multi(other->handle(), 2, ops, results), ZOK);
  std::cout << "[wrap] one multi created " << first_path << " and " << second_path << "\n";
  ASSERT_EQ(std::string(first_path), first_prefix + "2147483647");
  ASSERT_EQ(std::string(second_path), second_prefix + "-2147483648");
  // The first leaves: the -2147483648 node is alone, first in line - it holds the lock.
  ASSERT_EQ(zoo_delete(other->handle(), first_path, -1), ZOK);

  Session s(options_for(connect()));
  Mutex later(s, path);
  auto queue = later.contenders();
  ASSERT_EQ(queue.size(), 1u) << describe(queue);
  EXPECT_EQ(queue[0].sequence, INT32_MIN);
  const std::int64_t older_czxid = queue[0].czxid;

  // zklock queues behind it. Its node is created later (larger czxid) but numbered 2147483647:
  // the counter itself never left the top. First one try: it must not be granted.
  const bool granted = later.try_lock();
  if (granted) {
    const auto acq = later.acquisition();
    std::cout << "[wrap] zklock's node " << acq->node_path << " (czxid " << acq->czxid
              << ") was granted; queue:" << describe(later.contenders()) << "\n";
    later.unlock();
  }
  EXPECT_FALSE(granted) << "a contender created after the -2147483648 one (czxid " << older_czxid
                        << ") was granted the lock while that one holds it: two holders";

  // Then a waiting lock(): contenders() must list the older node first, and the lock must come
  // when - and only when - the older one leaves.
  Session ws(options_for(connect()));
  Mutex waiter(ws, path);
  std::atomic<bool> acquired{false};
  std::atomic<bool> older_gone{false}, granted_early{false};
  std::thread waiting([&] {
    try {
      waiter.lock();
      if (!older_gone) granted_early = true;
      acquired = true;
    } catch (const std::exception&) {
    }
  });
  struct Join {
    Mutex& m;
    std::thread& t;
    ~Join() {
      m.cancel();
      if (t.joinable()) t.join();
    }
  } join_at_exit{waiter, waiting};
  ASSERT_TRUE(wait_until([&] { return lock_children(s, path).size() == 2; }, kGrantLimit));
  queue = later.contenders();
  ASSERT_EQ(queue.size(), 2u) << describe(queue);
  EXPECT_EQ(queue[0].name, std::string(second_path).substr(path.size() + 1))
      << "the queue zklock reports is not the creation order:" << describe(queue);
  for (const auto& c : queue) {
    if (c.czxid == older_czxid) continue;
    // Ours: created later, numbered 2147483647 - larger than the older node's, and not the
    // -2147483647 that a counter which had wrapped would give.
    EXPECT_GT(c.czxid, older_czxid) << describe(queue);
    EXPECT_EQ(c.sequence, kTop) << describe(queue);
  }

  older_gone = true;
  ASSERT_EQ(zoo_delete(other->handle(), second_path, -1), ZOK);
  EXPECT_TRUE(wait_until([&] { return acquired.load(); }, kGrantLimit))
      << "not granted after the older one left";
  EXPECT_FALSE(granted_early)
      << "the waiter was granted the lock while the -2147483648 node held it";
  waiter.cancel();
  waiting.join();
  waiter.unlock();
  expect_nothing_left(s, port(), path);
}

}  // namespace
}  // namespace zklock::testing
