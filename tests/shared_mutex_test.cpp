// zklock::SharedMutex against a real server: readers share, writers exclude, FIFO between them,
// one release wakes only those who can enter, downgrade and upgrade, and nothing left behind.
#include <algorithm>
#include <atomic>
#include <memory>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "lost_reports.h"
#include "test_env.h"
#include "waiter.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

// One contender per session, as separate processes would be.
struct Contender {
  Contender(const std::string& connect, const std::string& path)
      : session(options_for(connect)), mutex(session, path) {}
  Session session;
  SharedMutex mutex;
};

// Waits until `n` nodes queue on `path`.
bool queued(Session& observer, const std::string& path, std::size_t n) {
  return wait_until([&] { return lock_children(observer, path).size() == n; }, 10s);
}

std::string kind_name(ContenderKind kind) {
  switch (kind) {
    case ContenderKind::kRead:
      return "read";
    case ContenderKind::kWrite:
      return "write";
    case ContenderKind::kExclusive:
      break;
  }
  return "exclusive";
}

TEST(SharedMutexTest, ReadersHoldTogetherWritersAlone) {
  auto server = shared_server();
  const std::string path = unique_path("rw");
  constexpr int kReaders = 4, kWriters = 2, kRounds = 8;
  std::atomic<int> readers_inside{0}, writers_inside{0}, max_readers{0}, violations{0};
  std::atomic<int> entered_together{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders; ++i) {
    threads.emplace_back([&] {
      Contender c(server.connect, path);
      for (int round = 0; round < kRounds; ++round) {
        std::shared_lock lock(c.mutex);
        const int now = ++readers_inside;
        if (writers_inside != 0) ++violations;
        int seen = max_readers;
        while (now > seen && !max_readers.compare_exchange_weak(seen, now)) {
        }
        if (round == 0) {
          // The first round, before any writer queues: every reader waits inside until all are
          // in at once - which only a lock that lets readers share allows (else this times out).
          ++entered_together;
          wait_until([&] { return entered_together == kReaders; }, 10s);
        }
        --readers_inside;
      }
    });
  }
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&] {
      Contender c(server.connect, path);
      wait_until([&] { return entered_together == kReaders; }, 20s);
      for (int round = 0; round < kRounds; ++round) {
        std::unique_lock lock(c.mutex);
        if (++writers_inside != 1 || readers_inside != 0) ++violations;
        std::this_thread::yield();
        --writers_inside;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(violations, 0);
  EXPECT_EQ(max_readers, kReaders);
  Session observer(options_for(server.connect));
  EXPECT_TRUE(lock_children(observer, path).empty());
  EXPECT_TRUE(watches_under(server.port, path).empty());
}

// W1 holds; then R1, W2, R2, R3 queue in that order. Each release lets in exactly those next in
// line that may enter: R1 alone (R2 and R3 are behind W2), then W2, then R2 and R3 together.
TEST(SharedMutexTest, MixedQueueIsServedInArrivalOrder) {
  auto server = shared_server();
  const std::string path = unique_path("fifo");
  Session observer(options_for(server.connect));
  Contender w1(server.connect, path), r1(server.connect, path), w2(server.connect, path),
      r2(server.connect, path), r3(server.connect, path);
  w1.mutex.lock();
  Waiter r1_call([&] { r1.mutex.lock_shared(); });
  ASSERT_TRUE(queued(observer, path, 2));
  Waiter w2_call([&] { w2.mutex.lock(); });
  ASSERT_TRUE(queued(observer, path, 3));
  Waiter r2_call([&] { r2.mutex.lock_shared(); });
  ASSERT_TRUE(queued(observer, path, 4));
  Waiter r3_call([&] { r3.mutex.lock_shared(); });
  ASSERT_TRUE(queued(observer, path, 5));

  std::vector<std::string> kinds;
  for (const auto& c : w1.mutex.contenders()) kinds.push_back(kind_name(c.kind));
  EXPECT_EQ(kinds, (std::vector<std::string>{"write", "read", "write", "read", "read"}));

  w1.mutex.unlock();
  ASSERT_TRUE(wait_until([&] { return r1_call.acquired(); }, 10s)) << r1_call.error();
  // Once R1 holds, the queue is R1 W2 R2 R3 and nobody else can enter until R1 goes: R2 and R3
  // watch W2 only. Checked once the server shows the state settled (W1's node gone).
  ASSERT_TRUE(queued(observer, path, 4));
  EXPECT_FALSE(w2_call.acquired());
  EXPECT_FALSE(r2_call.acquired());
  EXPECT_FALSE(r3_call.acquired());

  r1.mutex.unlock_shared();
  ASSERT_TRUE(wait_until([&] { return w2_call.acquired(); }, 10s)) << w2_call.error();
  EXPECT_FALSE(r2_call.acquired());
  EXPECT_FALSE(r3_call.acquired());

  w2.mutex.unlock();
  ASSERT_TRUE(wait_until([&] { return r2_call.acquired() && r3_call.acquired(); }, 10s));
  EXPECT_TRUE(r2.mutex.owns_shared());
  EXPECT_TRUE(r3.mutex.owns_shared());
  EXPECT_LT(r2.mutex.fencing_token(), r3.mutex.fencing_token());
  r2.mutex.unlock_shared();
  r3.mutex.unlock_shared();
  EXPECT_TRUE(queued(observer, path, 0));
}

// kazoo issue 649: a reader that took a LATER writer for its predecessor waited on it while that
// writer waited on the reader - a deadlock. Here W2 queues behind the waiting reader R before W1
// goes, and again before R even lists: R must get in, and W2 after it.
TEST(SharedMutexTest, AReaderNeverWaitsForALaterWriter) {
  auto server = shared_server();
  const std::string path = unique_path("kazoo649");
  Session observer(options_for(server.connect));
  Contender w1(server.connect, path), r(server.connect, path), w2(server.connect, path);
  w1.mutex.lock();
  Waiter r_call([&] { r.mutex.lock_shared(); });
  ASSERT_TRUE(queued(observer, path, 2));
  Waiter w2_call([&] { w2.mutex.lock(); });
  ASSERT_TRUE(queued(observer, path, 3));
  w1.mutex.unlock();
  ASSERT_TRUE(wait_until([&] { return r_call.acquired(); }, 10s)) << r_call.error();
  EXPECT_FALSE(w2_call.acquired());
  r.mutex.unlock_shared();
  ASSERT_TRUE(wait_until([&] { return w2_call.acquired(); }, 10s)) << w2_call.error();
  // A writer already waiting behind a reader that holds: a new reader queues behind that writer
  // (FIFO: readers do not overtake a waiting writer, so writers are never starved).
  Contender r_late(server.connect, path);
  EXPECT_FALSE(r_late.mutex.try_lock_shared());
  w2.mutex.unlock();
  ASSERT_TRUE(queued(observer, path, 0));  // unlock() does not wait for the server's delete
  EXPECT_TRUE(r_late.mutex.try_lock_shared());
  r_late.mutex.unlock_shared();
}

TEST(SharedMutexTest, ANewReaderDoesNotOvertakeAWaitingWriter) {
  auto server = shared_server();
  const std::string path = unique_path("no-overtake");
  Session observer(options_for(server.connect));
  Contender r1(server.connect, path), w(server.connect, path), r2(server.connect, path);
  r1.mutex.lock_shared();
  Waiter w_call([&] { w.mutex.lock(); });
  ASSERT_TRUE(queued(observer, path, 2));
  EXPECT_FALSE(r2.mutex.try_lock_shared_for(200ms));
  EXPECT_TRUE(queued(observer, path, 2));  // the timed-out reader left nothing behind
  r1.mutex.unlock_shared();
  ASSERT_TRUE(wait_until([&] { return w_call.acquired(); }, 10s)) << w_call.error();
  w.mutex.unlock();
}

// A writer's release wakes only the readers behind it: they each watch that writer, nothing else
// (no watch on the lock path's children, none on other readers).
TEST(SharedMutexTest, ReadersWatchOnlyTheWriterAheadOfThem) {
  auto server = shared_server();
  const std::string path = unique_path("watches");
  Session observer(options_for(server.connect));
  Contender w(server.connect, path), r1(server.connect, path), r2(server.connect, path),
      r3(server.connect, path), w2(server.connect, path);
  w.mutex.lock();
  const std::string writer_node = w.mutex.acquisition()->node_path;
  Waiter c1([&] { r1.mutex.lock_shared(); });
  ASSERT_TRUE(queued(observer, path, 2));
  Waiter c2([&] { r2.mutex.lock_shared(); });
  ASSERT_TRUE(queued(observer, path, 3));
  Waiter c3([&] { r3.mutex.lock_shared(); });
  ASSERT_TRUE(queued(observer, path, 4));
  Waiter cw2([&] { w2.mutex.lock(); });
  ASSERT_TRUE(queued(observer, path, 5));
  const auto nodes = lock_children(observer, path);
  // Besides the writer's node, the only watched nodes are the waiters' own (the fast path's
  // watch, set by those waiting behind a first-in-line node) and, for W2, its predecessor R3.
  std::vector<std::string> watched;
  ASSERT_TRUE(wait_until(
      [&] {
        watched = watches_under(server.port, path + "/");
        return std::find(watched.begin(), watched.end(), writer_node) != watched.end();
      },
      10s));
  EXPECT_TRUE(watches_under(server.port, path).size() == watched.size())
      << "a watch on the lock path itself (a herd on every change)";
  for (const auto& node : watched) {
    const std::string name = node.substr(path.size() + 1);
    EXPECT_TRUE(node == writer_node || parse_contender_name(name)->kind == ContenderKind::kRead)
        << node << " is watched";
  }
  w.mutex.unlock();
  ASSERT_TRUE(wait_until([&] { return c1.acquired() && c2.acquired() && c3.acquired(); }, 10s));
  EXPECT_FALSE(cw2.acquired());
  r1.mutex.unlock_shared();
  r2.mutex.unlock_shared();
  EXPECT_FALSE(cw2.acquired());
  r3.mutex.unlock_shared();
  ASSERT_TRUE(wait_until([&] { return cw2.acquired(); }, 10s)) << cw2.error();
  w2.mutex.unlock();
  EXPECT_TRUE(queued(observer, path, 0));
  EXPECT_TRUE(wait_until([&] { return watches_under(server.port, path).empty(); }, 10s));
}

TEST(SharedMutexTest, UpgradeIsRefusedWithAClearError) {
  auto server = shared_server();
  const std::string path = unique_path("upgrade");
  Session s(options_for(server.connect));
  SharedMutex m(s, path);
  m.lock_shared();
  try {
    m.lock();
    ADD_FAILURE() << "lock() while holding shared did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.errc(), Errc::would_deadlock);
    EXPECT_NE(std::string(e.what()).find("upgrad"), std::string::npos) << e.what();
  }
  EXPECT_THROW(m.lock_shared(), Error);  // not reentrant either
  EXPECT_TRUE(m.owns_shared());
  EXPECT_EQ(lock_children(s, path).size(), 1U);
  m.unlock();  // releases only an exclusive hold: the shared one stays
  EXPECT_TRUE(m.owns_shared());
  m.unlock_shared();
  EXPECT_FALSE(m.owns_lock());
  EXPECT_TRUE(lock_children(s, path).empty());
}

TEST(SharedMutexTest, DowngradeLetsReadersInAndKeepsWritersOut) {
  auto server = shared_server();
  const std::string path = unique_path("downgrade");
  Session observer(options_for(server.connect));
  Contender holder(server.connect, path), reader(server.connect, path),
      writer(server.connect, path);
  EXPECT_THROW((void)holder.mutex.try_downgrade(), Error);  // nothing held
  holder.mutex.lock();
  const FencingToken write_token = holder.mutex.fencing_token();
  Waiter reader_call([&] { reader.mutex.lock_shared(); });
  ASSERT_TRUE(queued(observer, path, 2));
  ASSERT_TRUE(holder.mutex.try_downgrade());
  EXPECT_TRUE(holder.mutex.owns_shared());
  EXPECT_EQ(holder.mutex.state(), LockState::kHeld);
  EXPECT_GT(holder.mutex.fencing_token(), write_token);
  // The reader that waited behind our write node is in beside us; a writer is not.
  ASSERT_TRUE(wait_until([&] { return reader_call.acquired(); }, 10s)) << reader_call.error();
  EXPECT_FALSE(writer.mutex.try_lock());
  EXPECT_THROW((void)holder.mutex.try_downgrade(), Error);  // held shared already
  std::vector<std::string> kinds;
  for (const auto& c : holder.mutex.contenders()) kinds.push_back(kind_name(c.kind));
  EXPECT_EQ(kinds, (std::vector<std::string>{"read", "read"}));  // the write node is gone
  holder.mutex.unlock_shared();
  EXPECT_FALSE(writer.mutex.try_lock());  // the other reader still holds
  reader.mutex.unlock_shared();
  ASSERT_TRUE(queued(observer, path, 0));
  EXPECT_TRUE(writer.mutex.try_lock());
  writer.mutex.unlock();
  EXPECT_TRUE(queued(observer, path, 0));
}

// A writer queued behind our write node would have to go before any reader behind it: the
// downgrade cannot keep it out, so it is refused and the write lock stays as it was.
TEST(SharedMutexTest, DowngradeIsRefusedWhenAWriterIsQueuedBehind) {
  auto server = shared_server();
  const std::string path = unique_path("downgrade-refused");
  Session observer(options_for(server.connect));
  Contender holder(server.connect, path), writer(server.connect, path);
  holder.mutex.lock();
  const Acquisition before = *holder.mutex.acquisition();
  Waiter writer_call([&] { writer.mutex.lock(); });
  ASSERT_TRUE(queued(observer, path, 2));
  EXPECT_FALSE(holder.mutex.try_downgrade());
  EXPECT_FALSE(holder.mutex.owns_shared());
  EXPECT_EQ(holder.mutex.state(), LockState::kHeld);
  EXPECT_EQ(holder.mutex.acquisition()->node_path, before.node_path);
  EXPECT_TRUE(queued(observer, path, 2));  // the read node of the attempt is gone again
  EXPECT_FALSE(writer_call.acquired());
  holder.mutex.unlock();
  ASSERT_TRUE(wait_until([&] { return writer_call.acquired(); }, 10s)) << writer_call.error();
  writer.mutex.unlock();
}

TEST(SharedMutexTest, TimeoutsAndTriesLeaveNothingBehind) {
  auto server = shared_server();
  const std::string path = unique_path("timeouts");
  Session observer(options_for(server.connect));
  Contender writer(server.connect, path), other(server.connect, path);
  writer.mutex.lock();
  EXPECT_FALSE(other.mutex.try_lock_shared());
  EXPECT_FALSE(other.mutex.try_lock());
  EXPECT_FALSE(other.mutex.try_lock_shared_for(300ms));
  EXPECT_FALSE(other.mutex.try_lock_for(300ms));
  EXPECT_FALSE(other.mutex.try_lock_shared_until(std::chrono::system_clock::now() + 200ms));
  EXPECT_EQ(lock_children(observer, path).size(), 1U);
  writer.mutex.unlock();
  ASSERT_TRUE(queued(observer, path, 0));  // unlock() does not wait for the server's delete
  {
    std::shared_lock lock(other.mutex, std::try_to_lock);
    EXPECT_TRUE(lock.owns_lock());
    std::shared_lock timed(writer.mutex, 1s);  // readers share
    EXPECT_TRUE(timed.owns_lock());
    std::unique_lock excluded(writer.mutex, std::defer_lock);
  }
  EXPECT_TRUE(queued(observer, path, 0));
  EXPECT_TRUE(wait_until([&] { return watches_under(server.port, path).empty(); }, 10s));
}

TEST(SharedMutexTest, AHeldReadLockWhoseNodeIsDeletedIsLost) {
  auto server = shared_server();
  const std::string path = unique_path("read-lost");
  Session a(options_for(server.connect)), admin(options_for(server.connect));
  LostReports lost;
  SharedMutex m(a, path, lost.options(/*shared_holds_only=*/true));
  m.lock_shared();
  ASSERT_TRUE(admin.remove(m.acquisition()->node_path));
  EXPECT_TRUE(m.wait_lost_for(5s)) << m.state();
  EXPECT_TRUE(wait_until([&] { return lost.count() == 1; }, 5s));
  EXPECT_THROW(m.commit_fenced(FencedWrite().set(path, "x")), LockLostError);
  m.unlock_shared();
}

TEST(SharedMutexTest, ReadersAndWritersFenceTheirWrites) {
  auto server = shared_server();
  const std::string path = unique_path("fenced");
  const std::string data = path + "-data";
  Session s(options_for(server.connect));
  s.create(data, "0", CreateMode::kPersistent, /*make_parents=*/true);
  SharedMutex m(s, path);
  {
    std::unique_lock lock(m);
    m.commit_fenced(FencedWrite().set(data, "written"));
  }
  {
    std::shared_lock lock(m);
    m.commit_fenced(FencedWrite().set(data, "read-side"));
  }
  EXPECT_EQ(s.get(data)->data, "read-side");
  EXPECT_THROW(m.commit_fenced(FencedWrite().set(data, "late")), LockLostError);
}

// The exclusive locks on the path: a Mutex's node counts as a writer for a SharedMutex, and a
// Mutex refuses a path where read/write nodes are (their readers would not see it).
TEST(SharedMutexTest, MutexAndSharedMutexOnOnePathNeverHoldTogether) {
  auto server = shared_server();
  const std::string path = unique_path("mixed");
  Session a(options_for(server.connect)), b(options_for(server.connect));
  {
    Mutex exclusive(a, path);
    exclusive.lock();
    SharedMutex shared(b, path);
    EXPECT_FALSE(shared.try_lock_shared());
    EXPECT_FALSE(shared.try_lock());
    exclusive.unlock();
  }
  SharedMutex shared(b, path);
  shared.lock_shared();
  Mutex exclusive(a, path);
  try {
    (void)exclusive.try_lock();
    ADD_FAILURE() << "a Mutex took a path where a SharedMutex reader holds";
  } catch (const Error& e) {
    EXPECT_EQ(e.errc(), Errc::incompatible_lock) << e.what();
  }
  EXPECT_EQ(lock_children(a, path).size(), 1U);
  shared.unlock_shared();
}

TEST(SharedMutexTest, DestroyingTheObjectCancelsItsWaitersAndReleases) {
  auto server = shared_server();
  const std::string path = unique_path("destroy");
  Session observer(options_for(server.connect));
  Contender writer(server.connect, path);
  writer.mutex.lock();
  std::unique_ptr<Waiter> waiter;
  {
    Session s(options_for(server.connect));
    SharedMutex m(s, path);
    waiter = std::make_unique<Waiter>([&m] { m.lock_shared(); });
    ASSERT_TRUE(queued(observer, path, 2));
  }  // ~SharedMutex: the waiter throws and has left before this returns
  waiter->join();
  EXPECT_TRUE(waiter->cancelled()) << waiter->error();
  EXPECT_TRUE(queued(observer, path, 1));
  writer.mutex.unlock();
}

}  // namespace
}  // namespace zklock::testing
