// Interop: zklock::Mutex, Apache Curator's InterProcessMutex and python kazoo's
// Lock(extra_lock_patterns=["-lock-"]) contending on ONE lock path of a real server.
//
// The contenders (contenders.h) - Curator and kazoo programs, zklock threads - all follow one
// protocol around their critical section, and the shared event log (event_log.h) then shows who
// held the lock when, in order.
//
// What each library sees of the others:
//   zklock  sees both other kinds of node (it parses "-lock-" and "__lock__" names);
//   kazoo   sees zklock's and Curator's "-lock-" nodes, thanks to extra_lock_patterns;
//   Curator sees zklock's nodes (same protected "-lock-" name) but NOT kazoo's: it sorts children
//           by the text after its "lock-" marker, and a kazoo name has none, so a kazoo node sorts
//           by its uuid hex - after every "-lock-" node. Curator never waits for a kazoo node
//           (pinned by CuratorIgnoresKazooNodes_KnownLimitation). So Curator and kazoo must not
//           share a lock path; the mixed mutual-exclusion tests pair zklock with one peer at a
//           time, and the three-library FIFO test places every Curator contender right behind a
//           "-lock-" node (which only goes after every kazoo node ahead of it).
//
// A peer that is not installed makes its tests skip - or fail, on CI or with
// ZKLOCK_INTEROP_REQUIRED (ZKLOCK_REQUIRE_PEER).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "contenders.h"
#include "event_log.h"
#include "interop_fixture.h"
#include "support/files.h"
#include "support/four_letter_words.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

class InteropTest : public InteropFixture {
 protected:
  // The tests run once per peer library; each skips - or fails - without it (ZKLOCK_REQUIRE_PEER).
  void run_lock_delay_beside(Lib peer_lib);
};

// ---------------------------------------------------------------------------------------------
// Mixed mutual exclusion (InteropFixture::run_mixed_exclusion): two peer processes of one library
// and two zklock threads, all looping on one path at once.
TEST_F(InteropTest, CuratorAndZklockExcludeEachOther) { run_mixed_exclusion(Lib::kCurator); }

TEST_F(InteropTest, KazooAndZklockExcludeEachOther) { run_mixed_exclusion(Lib::kKazoo); }

// ---------------------------------------------------------------------------------------------
// Lock-delay beside a peer (docs/recipe.md, "Lock-delay"): a zklock release marks the lock path,
// which the peer ignores - a peer waiter takes over at once; a peer's release carries no mark, so
// a zklock waiter with a lock-delay cannot tell it from an unclean end and waits the delay (the
// safe side) - past a deadline far shorter than the delay, which it then reports as a timeout.
void InteropTest::run_lock_delay_beside(Lib peer_lib) {
  ZKLOCK_REQUIRE_PEER(peer_check(peer_lib));
  MutexOptions with_delay;
  with_delay.lock_delay = std::chrono::minutes(2);
  Session s(options_for(server_.connect));
  Mutex zm(s, path_, with_delay);

  ASSERT_TRUE(zm.try_lock_for(std::chrono::seconds(30)));  // a new path: nothing to wait for
  const auto waiter = start_holder(peer_lib, "peer");
  ASSERT_TRUE(wait_queued(zm, 2, waiter.get())) << waiter->describe();
  zm.unlock();
  ASSERT_TRUE(wait_entered(1, *waiter)) << waiter->describe();  // no delay for the peer
  const auto mark = observer_.get(path_);
  ASSERT_TRUE(mark.has_value());
  EXPECT_EQ(mark->data.rfind("zklock-released ", 0), 0u) << mark->data;

  // The peer holds; zklock queues behind it; the peer releases.
  ASSERT_TRUE(wait_queued(zm, 1, nullptr));
  bool acquired = true;
  std::thread zklock_waiter([&] { acquired = zm.try_lock_for(std::chrono::seconds(8)); });
  ASSERT_TRUE(wait_queued(zm, 2, waiter.get())) << waiter->describe();
  release("peer");
  expect_exit(*waiter, 0);
  zklock_waiter.join();
  EXPECT_FALSE(acquired) << "a " << lib_name(peer_lib) << " release was taken for a marked one";
  expect_lock_path_clean(observer_, server_.port, path_);
}

TEST_F(InteropTest, LockDelayBesideCurator) { run_lock_delay_beside(Lib::kCurator); }

TEST_F(InteropTest, LockDelayBesideKazoo) { run_lock_delay_beside(Lib::kKazoo); }

// ---------------------------------------------------------------------------------------------
// Revocation crosses between zklock and Curator (both write "__REVOKE__" into the holder's node):
// zklock's request reaches a revocable Curator holder, which lets go; Curator's Revoker reaches a
// revocable zklock holder. (kazoo has no revocation.)
TEST_F(InteropTest, RevocationCrossesBetweenZklockAndCurator) {
  ZKLOCK_REQUIRE_PEER(curator_missing);
  ContenderArgs revocable = args("curator");
  revocable.hold_until = dir_.file("release-curator");
  revocable.revocable = true;
  Peer* curator = start(Lib::kCurator, revocable);
  ASSERT_TRUE(wait_entered(1, *curator)) << curator->describe();
  const std::vector<std::string> held = lock_children(observer_, path_);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(request_revocation(observer_, path_ + "/" + held[0]), RevocationRequest::kAsked);
  EXPECT_TRUE(curator->wait_printed("revocation requested")) << curator->describe();
  expect_exit(*curator, 0);

  Session s(options_for(server_.connect));
  std::atomic<int> heard{0};
  MutexOptions listening;
  listening.on_revocation_requested = [&heard](const Acquisition&) { ++heard; };
  Mutex zm(s, path_, listening);
  ASSERT_TRUE(zm.try_lock_for(std::chrono::seconds(30)));
  ContenderArgs revoke = args("revoker");
  revoke.revoke_node = zm.acquisition()->node_path;
  Peer revoker(Lib::kCurator, revoke, dir_.file("revoker.out"));
  expect_exit(revoker, 0);
  EXPECT_TRUE(revoker.printed("revoke sent")) << revoker.describe();
  EXPECT_TRUE(wait_until([&] { return heard.load() == 1; }, std::chrono::seconds(10)))
      << "the Revoker's request did not reach the zklock holder";
  zm.unlock();
  expect_lock_path_clean(observer_, server_.port, path_);
}

// ---------------------------------------------------------------------------------------------
// FIFO across the three libraries. A zklock Mutex holds the lock; contenders of each library
// join the queue one at a time (each started only once the previous one's node exists, seen by
// zklock's contenders()); on release they acquire exactly in queue order. contenders() shows the
// queue with each node's naming and data. The order Curator, kazoo, zklock, Curator, ... puts
// every Curator contender right behind a zklock node (see the file comment: Curator would not
// wait for a kazoo node directly ahead of it).
TEST_F(InteropTest, QueueIsFifoAcrossLibraries) {
  ZKLOCK_REQUIRE_PEER(curator_missing);
  ZKLOCK_REQUIRE_PEER(kazoo_missing);

  Session holder_session(options_for(server_.connect));
  MutexOptions holder_options;
  holder_options.description = "holder";
  Mutex holder(holder_session, path_, holder_options);
  holder.lock();
  const auto held = holder.acquisition();
  ASSERT_TRUE(held.has_value());
  const std::string holder_node = held->node_path.substr(path_.size() + 1);

  const std::vector<std::pair<Lib, std::string>> plan = {
      {Lib::kCurator, "curator-1"}, {Lib::kKazoo, "kazoo-1"}, {Lib::kZklock, "zklock-1"},
      {Lib::kCurator, "curator-2"}, {Lib::kKazoo, "kazoo-2"}, {Lib::kZklock, "zklock-2"}};
  std::vector<std::string> queue = {holder_node};  // node names in the order they joined
  for (const auto& [lib, name] : plan) {
    const auto before = contender_names(holder);
    ASSERT_EQ(before, queue) << "the queue changed while nobody was joining";
    ContenderArgs a = args(name, 1, 5);
    a.queue_once = true;
    Peer* peer = start(lib, a);
    // Its node is in the queue before the next contender starts.
    ASSERT_TRUE(wait_queued(holder, before.size() + 1, peer))
        << name << " never queued" << (peer ? "; " + peer->describe() : "");
    const auto now = contender_names(holder);
    ASSERT_EQ(now.size(), before.size() + 1) << name << ":\n"
                                             << dump(now) << (peer ? peer->describe() : "");
    ASSERT_TRUE(std::equal(before.begin(), before.end(), now.begin())) << "new node not last:\n"
                                                                       << dump(now);
    queue.push_back(now.back());
    // The contender's own report of its node agrees with the server's.
    if (peer != nullptr) {
      EXPECT_TRUE(peer->wait_printed("queued " + now.back())) << peer->describe();
    }
  }

  // zklock's view of the mixed queue: order, naming, data, owners.
  const auto contenders = holder.contenders();
  ASSERT_EQ(contenders.size(), queue.size());
  std::set<std::int64_t> owners;
  const std::regex kazoo_name("[0-9a-f]{32}__lock__[0-9]{10}");
  const std::regex protected_name("_c_[0-9a-f-]{36}-lock-[0-9]{10}");
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const Contender& c = contenders[i];
    SCOPED_TRACE("contender " + std::to_string(i) + ": " + c.name + " data " + c.data);
    EXPECT_EQ(c.name, queue[i]);
    const Lib lib = i == 0 ? Lib::kZklock : plan[i - 1].first;
    const std::string name = i == 0 ? "holder" : plan[i - 1].second;
    if (lib == Lib::kKazoo) {
      EXPECT_EQ(c.naming, NodeNaming::kKazoo);
      EXPECT_TRUE(std::regex_match(c.name, kazoo_name));
      EXPECT_EQ(c.data, name);  // kazoo's identifier
    } else {
      EXPECT_EQ(c.naming, NodeNaming::kProtected);
      EXPECT_TRUE(std::regex_match(c.name, protected_name));
      if (lib == Lib::kCurator) {
        EXPECT_EQ(c.data, name);  // the Curator client's default data
      } else {
        EXPECT_NE(c.data.find("\"lib\":\"zklock\""), std::string::npos);
        EXPECT_NE(c.data.find("\"description\":\"" + name + "\""), std::string::npos);
      }
    }
    if (i > 0) {
      EXPECT_GT(c.sequence, contenders[i - 1].sequence);
      EXPECT_GT(c.czxid, contenders[i - 1].czxid);
    }
    EXPECT_NE(c.ephemeral_owner, 0);
    owners.insert(c.ephemeral_owner);
  }
  EXPECT_EQ(contenders[0].ephemeral_owner, holder_session.session_id());
  EXPECT_EQ(contenders[0].sequence, held->sequence);
  EXPECT_EQ(contenders[0].czxid, held->czxid);
  EXPECT_EQ(owners.size(), contenders.size()) << "every contender has its own session";

  holder.unlock();
  expect_all_done();

  const auto events = read_events(log_);
  EXPECT_EQ(exclusion_problem(events, expected_), "") << "log:\n" << read_file(log_);
  std::vector<std::string> want;
  for (const auto& step : plan) want.push_back(step.second);
  EXPECT_EQ(enter_order(events), want) << "acquisitions out of queue order; log:\n"
                                       << read_file(log_);

  expect_lock_path_clean(observer_, server_.port, path_);
}

// ---------------------------------------------------------------------------------------------
// zklock and foreign holders/waiters: a Curator holder and a kazoo waiter are listed by zklock's
// contenders() with their naming and data; zklock's try_lock() refuses while either holds (and
// leaves no node behind); kazoo waits on the Curator node (its watch is on that node, seen on the
// server) and gets the lock only after Curator released it.
TEST_F(InteropTest, ContendersListsForeignHolderAndWaiter) {
  ZKLOCK_REQUIRE_PEER(curator_missing);
  ZKLOCK_REQUIRE_PEER(kazoo_missing);

  const auto curator = start_holder(Lib::kCurator, "curator");
  ASSERT_TRUE(wait_entered(1, *curator)) << curator->describe();
  ASSERT_EQ(enter_order(read_events(log_)), std::vector<std::string>{"curator"})
      << curator->describe();

  Session zs(options_for(server_.connect));
  Mutex zm(zs, path_);
  EXPECT_FALSE(zm.try_lock()) << "zklock took the lock while Curator held it";
  // try_lock() returns once its node is deleted again (the connection is up).
  EXPECT_EQ(observer_.children(path_).value_or(std::vector<std::string>{}).size(), 1u)
      << "a failed try_lock left its node";

  const auto kazoo = start_holder(Lib::kKazoo, "kazoo");
  std::vector<Contender> cs;
  ASSERT_TRUE(wait_until(
      [&] {
        cs = zm.contenders();
        return cs.size() >= 2 || !kazoo->process().running();
      },
      kStartLimit))
      << kazoo->describe();
  ASSERT_EQ(cs.size(), 2u) << kazoo->describe();
  const Contender& c0 = cs[0];
  const Contender& c1 = cs[1];
  EXPECT_EQ(c0.naming, NodeNaming::kProtected);
  EXPECT_EQ(c0.name.rfind("_c_", 0), 0u) << c0.name;
  EXPECT_EQ(c0.data, "curator");
  EXPECT_TRUE(curator->printed("queued " + c0.name)) << curator->describe();
  EXPECT_EQ(c1.naming, NodeNaming::kKazoo);
  EXPECT_NE(c1.name.find("__lock__"), std::string::npos) << c1.name;
  EXPECT_EQ(c1.data, "kazoo");
  EXPECT_GT(c1.sequence, c0.sequence);
  EXPECT_GT(c1.czxid, c0.czxid);
  EXPECT_NE(c0.ephemeral_owner, 0);
  EXPECT_NE(c1.ephemeral_owner, 0);
  EXPECT_NE(c0.ephemeral_owner, c1.ephemeral_owner);
  EXPECT_NE(c0.ephemeral_owner, zs.session_id());

  // kazoo recognises the Curator node as its predecessor: it waits with a watch on it.
  const std::string curator_node = path_ + "/" + c0.name;
  EXPECT_TRUE(wait_until(
      [&] {
        const auto w = watched_paths(server_.port);
        return std::find(w.begin(), w.end(), curator_node) != w.end();
      },
      kStartLimit))
      << "no watch on " << curator_node << "; watched:\n"
      << dump(watched_paths(server_.port));
  EXPECT_EQ(enter_order(read_events(log_)), std::vector<std::string>{"curator"});

  release("curator");
  expect_exit(*curator, 0);
  ASSERT_TRUE(wait_entered(2, *kazoo)) << kazoo->describe();
  EXPECT_FALSE(zm.try_lock()) << "zklock took the lock while kazoo held it";
  EXPECT_EQ(contender_names(zm), std::vector<std::string>{c1.name});

  release("kazoo");
  expect_exit(*kazoo, 0);
  EXPECT_EQ(exclusion_problem(read_events(log_), {{"curator", 1}, {"kazoo", 1}}), "")
      << read_file(log_);
  EXPECT_EQ(enter_order(read_events(log_)), (std::vector<std::string>{"curator", "kazoo"}));

  expect_lock_path_clean(observer_, server_.port, path_);
}

// ---------------------------------------------------------------------------------------------
// Known limitation, pinned: Curator does not recognise kazoo's node names (it sorts children by
// the text after "lock-"; a kazoo name has none, so its uuid hex sorts after every "-lock-" node),
// and takes the lock while a kazoo contender holds it. zklock, on the same path, does respect the
// kazoo holder. If this test starts failing because Curator waited, Curator has learned kazoo's
// names: mix all three libraries in the mutual-exclusion test and drop the ordering caveat of
// QueueIsFifoAcrossLibraries.
TEST_F(InteropTest, CuratorIgnoresKazooNodes_KnownLimitation) {
  ZKLOCK_REQUIRE_PEER(curator_missing);
  ZKLOCK_REQUIRE_PEER(kazoo_missing);

  const auto kazoo = start_holder(Lib::kKazoo, "kazoo");
  ASSERT_TRUE(wait_entered(1, *kazoo)) << kazoo->describe();

  Session zs(options_for(server_.connect));
  Mutex zm(zs, path_);
  EXPECT_FALSE(zm.try_lock()) << "zklock took the lock while kazoo held it";

  // Curator acquires at once despite the kazoo holder, finds the marker and reports VIOLATION.
  Peer curator(Lib::kCurator, args("curator"), dir_.file("curator.out"));
  {
    SCOPED_TRACE("still running = Curator waited for the kazoo holder: the limitation is gone");
    expect_exit(curator, 3, kStartLimit);
  }
  const auto events = read_events(log_);
  ASSERT_GE(events.size(), 3u) << read_file(log_);
  EXPECT_EQ(events[0].what + " " + events[0].name, "enter kazoo");
  EXPECT_EQ(events[1].what + " " + events[1].name, "enter curator");
  EXPECT_EQ(events[2].what + " " + events[2].name, "VIOLATION curator");

  release("kazoo");
  expect_exit(*kazoo, 0);
  expect_lock_path_clean(observer_, server_.port, path_);
}

}  // namespace
}  // namespace zklock::testing
