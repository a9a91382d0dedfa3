// Revocation (zklock/revocation.h, MutexOptions::on_revocation_requested and the same option of
// SemaphoreOptions and ElectionOptions) against a real server: a request reaches a holder first
// at once and one that waited, a request made while a contender waits is reported when it
// acquires, nothing is released by the request itself, a holder that does not listen says so in
// its node data and is not asked, one that heard a request writes its data back, a lease's and a
// leader's holder hear it too, and with credentials nobody else may ask any of them.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "test_env.h"
#include "waiter.h"
#include "zklock/zklock.h"

namespace zklock::testing {
namespace {

// The requests a holder heard of, in order (node paths), filled on the event thread.
class Requests {
 public:
  // The options of a Mutex (or SharedMutex), Semaphore or Election that tell this object.
  template <class Options = MutexOptions>
  Options options() {
    Options o;
    o.on_revocation_requested = [this](const Acquisition& acquisition) {
      std::lock_guard lock(mutex_);
      nodes_.push_back(acquisition.node_path);
    };
    return o;
  }
  std::vector<std::string> nodes() const {
    std::lock_guard lock(mutex_);
    return nodes_;
  }
  bool wait_count(std::size_t n) const {
    return wait_until([&] { return nodes().size() >= n; }, 10s);
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> nodes_;
};

class MutexRevocation : public ::testing::Test {
 protected:
  MutexRevocation() : server_(shared_server()), path_(unique_path("revoke")) {}
  SessionOptions opts() const { return options_for(server_.connect); }
  // Waits until `count` contenders are queued on the path, as `s` lists them.
  bool queued(Session& s, std::size_t count) const {
    return wait_until([&] { return lock_children(s, path_).size() == count; }, 10s);
  }

  const ServerRef server_;
  const std::string path_;
};

TEST_F(MutexRevocation, AHolderFirstAtOnceHearsTheRequestAndKeepsTheLock) {
  Session holder_session(opts()), asker(opts());
  Requests requests;
  Mutex holder(holder_session, path_, requests.options());
  ASSERT_TRUE(holder.try_lock_for(30s));
  const std::string node = holder.acquisition()->node_path;
  EXPECT_NE(asker.get(node)->data.find("\"revocable\":true"), std::string::npos)
      << asker.get(node)->data;

  EXPECT_EQ(request_revocation(asker, node), RevocationRequest::kAsked);
  ASSERT_TRUE(requests.wait_count(1));
  EXPECT_EQ(requests.nodes(), std::vector<std::string>{node});
  // The holder decides: the request released nothing.
  EXPECT_EQ(holder.state(), LockState::kHeld);
  EXPECT_EQ(lock_children(asker, path_).size(), 1u);
  // Each request is heard: a second one too.
  EXPECT_EQ(request_revocation(asker, node), RevocationRequest::kAsked);
  EXPECT_TRUE(requests.wait_count(2));
  holder.unlock();
  ASSERT_TRUE(queued(asker, 0));
  EXPECT_EQ(request_revocation(asker, node), RevocationRequest::kGone) << "nobody to ask";
}

TEST_F(MutexRevocation, AHolderThatWaitedHearsItAndTheNextTakesOverWhenItLetsGo) {
  Session a(opts()), b(opts()), asker(opts());
  Requests first_requests, second_requests;
  Mutex first(a, path_, first_requests.options());
  Mutex second(b, path_, second_requests.options());
  ASSERT_TRUE(first.try_lock_for(30s));
  Waiter waiter(second);
  ASSERT_TRUE(queued(asker, 2));
  first.unlock();
  waiter.join();
  ASSERT_TRUE(waiter.acquired()) << waiter.error();

  // The application lets go when asked: the revoked holder unlocks on its own thread.
  Session c(opts());
  Mutex third(c, path_);
  Waiter third_waits(third);
  ASSERT_TRUE(queued(asker, 2));
  EXPECT_EQ(request_revocation(asker, second.acquisition()->node_path), RevocationRequest::kAsked);
  ASSERT_TRUE(second_requests.wait_count(1));
  EXPECT_TRUE(first_requests.nodes().empty()) << "a request reached a holder that had gone";
  second.unlock();
  third_waits.join();
  EXPECT_TRUE(third_waits.acquired()) << third_waits.error();
  third.unlock();
}

TEST_F(MutexRevocation, ARequestMadeWhileWaitingIsHeardOnceAcquired) {
  Session a(opts()), b(opts()), asker(opts());
  Requests requests;
  Mutex holder(a, path_);
  Mutex next(b, path_, requests.options());
  ASSERT_TRUE(holder.try_lock_for(30s));
  Waiter waiter(next);
  ASSERT_TRUE(queued(asker, 2));
  const std::string holder_node = holder.acquisition()->node_path;
  std::string waiting_node;
  for (const auto& name : lock_children(asker, path_)) {
    if (path_ + "/" + name != holder_node) waiting_node = name;
  }
  EXPECT_EQ(request_revocation(asker, path_ + "/" + waiting_node), RevocationRequest::kAsked);
  holder.unlock();
  waiter.join();
  ASSERT_TRUE(waiter.acquired()) << waiter.error();
  ASSERT_TRUE(requests.wait_count(1));
  EXPECT_EQ(requests.nodes(), std::vector<std::string>{path_ + "/" + waiting_node});
  next.unlock();
}

TEST_F(MutexRevocation, AHolderThatDoesNotListenSaysSoAndIsNotAsked) {
  Session holder_session(opts()), asker(opts());
  Mutex holder(holder_session, path_);
  ASSERT_TRUE(holder.try_lock_for(30s));
  const std::string node = holder.acquisition()->node_path;
  const std::string data = asker.get(node)->data;
  EXPECT_NE(data.find("\"revocable\":false"), std::string::npos) << data;
  EXPECT_EQ(request_revocation(asker, node), RevocationRequest::kNotRevocable);
  EXPECT_EQ(asker.get(node)->data, data) << "a request was written over a holder that refuses";
  EXPECT_EQ(holder.state(), LockState::kHeld);
  holder.unlock();
}

// A request overwrites the node's data (Curator's convention); the holder that heard it writes its
// own back, so the node goes on saying who holds it, that it is revocable, and a leader's value and
// stamp - for `zklock status`, `zklock revoke` and leader().
TEST_F(MutexRevocation, AHolderThatHeardARequestSaysWhoItIsAgain) {
  Session holder_session(opts()), asker(opts());
  Requests requests;
  MutexOptions o = requests.options();
  o.description = "nightly backup";
  Mutex holder(holder_session, path_, o);
  ASSERT_TRUE(holder.try_lock_for(30s));
  const std::string node = holder.acquisition()->node_path;
  const std::string data = asker.get(node)->data;
  EXPECT_EQ(request_revocation(asker, node), RevocationRequest::kAsked);
  ASSERT_TRUE(requests.wait_count(1));
  EXPECT_TRUE(wait_until([&] { return asker.get(node)->data == data; }, 10s))
      << asker.get(node)->data;
  EXPECT_EQ(request_revocation(asker, node), RevocationRequest::kAsked) << "asked again";
  EXPECT_TRUE(requests.wait_count(2));
  holder.unlock();

  // A leader: its proclaimed value and its stamp come back with it.
  ElectionOptions eo = requests.options<ElectionOptions>();
  eo.value = "first";
  Election election(holder_session, path_ + "-election", eo);
  election.campaign();
  ASSERT_TRUE(wait_until([&] { return election.leader() && election.leader()->since; }, 10s));
  election.proclaim("second");
  const Leader before = *election.leader();
  EXPECT_EQ(before.value, "second");
  EXPECT_EQ(request_revocation(asker, before.node_path), RevocationRequest::kAsked);
  ASSERT_TRUE(requests.wait_count(3));
  EXPECT_TRUE(wait_until([&] { return election.leader() == before; }, 10s))
      << asker.get(before.node_path)->data;
  election.resign();
}

TEST_F(MutexRevocation, BothSidesOfASharedMutexHearIt) {
  Session both(opts()), asker(opts());  // one session may hold either side in turn
  Requests reader_requests, writer_requests;
  SharedMutex reader(both, path_, reader_requests.options());
  SharedMutex writer(both, path_, writer_requests.options());
  ASSERT_TRUE(reader.try_lock_shared_for(30s));
  EXPECT_EQ(request_revocation(asker, reader.acquisition()->node_path), RevocationRequest::kAsked);
  ASSERT_TRUE(reader_requests.wait_count(1));
  reader.unlock_shared();
  ASSERT_TRUE(writer.try_lock_for(30s));
  EXPECT_EQ(request_revocation(asker, writer.acquisition()->node_path), RevocationRequest::kAsked);
  ASSERT_TRUE(writer_requests.wait_count(1));
  writer.unlock();
}

TEST_F(MutexRevocation, ALeaseHolderHearsTheRequestForItsOwnLeaseOnly) {
  Session holder_session(opts()), asker(opts());
  Requests requests;
  Semaphore sem(holder_session, path_, 2, requests.options<SemaphoreOptions>());
  Lease asked = sem.acquire(), other = sem.acquire();
  const std::string node = asked.acquisition().node_path;
  EXPECT_NE(asker.get(node)->data.find("\"revocable\":true"), std::string::npos)
      << asker.get(node)->data;
  EXPECT_EQ(request_revocation(asker, node), RevocationRequest::kAsked);
  ASSERT_TRUE(requests.wait_count(1));
  EXPECT_EQ(requests.nodes(), std::vector<std::string>{node});
  EXPECT_EQ(asked.state(), LockState::kHeld) << "the request itself released the lease";
  EXPECT_TRUE(wait_until(
      [&] { return asker.get(node)->data.find("\"revocable\":true") != std::string::npos; }, 10s))
      << "the lease's node did not say who holds it again: " << asker.get(node)->data;
  asked.release();  // the application decides
  EXPECT_EQ(other.state(), LockState::kHeld);
  // A lease of a Semaphore that does not listen says so, and hears nothing.
  Semaphore deaf(holder_session, path_ + "-deaf", 1);
  Lease unasked = deaf.acquire();
  const std::string deaf_node = unasked.acquisition().node_path;
  EXPECT_NE(asker.get(deaf_node)->data.find("\"revocable\":false"), std::string::npos);
  EXPECT_EQ(request_revocation(asker, deaf_node), RevocationRequest::kNotRevocable);
  EXPECT_EQ(unasked.state(), LockState::kHeld);
  EXPECT_EQ(requests.nodes().size(), 1u);
}

TEST_F(MutexRevocation, ALeaderHearsTheRequestAndMayResign) {
  Session leader_session(opts()), other_session(opts()), asker(opts());
  Requests requests;
  Election leader(leader_session, path_, requests.options<ElectionOptions>());
  Election other(other_session, path_);
  leader.campaign();
  const std::string node = leader.leadership()->node_path;
  EXPECT_EQ(request_revocation(asker, node), RevocationRequest::kAsked);
  ASSERT_TRUE(requests.wait_count(1));
  EXPECT_TRUE(leader.is_leader()) << "the request itself ended the term";
  leader.resign();
  EXPECT_TRUE(other.try_campaign_for(30s)) << "the next participant did not lead";
  other.resign();
}

TEST_F(MutexRevocation, WithCredentialsNobodyElseMayAsk) {
  const std::string base = unique_path("revoke-acl");
  {
    Session admin(opts());
    admin.create(base, {}, CreateMode::kPersistent, true);  // open, like the shared ancestors
  }
  SessionOptions owner_options = opts();
  owner_options.credentials = DigestCredentials{"app", "secret"};
  Session owner(owner_options), colleague(owner_options), intruder(opts());
  Requests requests;
  Mutex holder(owner, base + "/job", requests.options());
  ASSERT_TRUE(holder.try_lock_for(30s));
  const std::string node = holder.acquisition()->node_path;
  EXPECT_THROW(request_revocation(intruder, node), NotAuthorizedError);
  EXPECT_NE(intruder.get(node)->data.find("\"revocable\":true"), std::string::npos)
      << "the intruder's request was written";
  // Another session with the owner's identity may ask.
  EXPECT_EQ(request_revocation(colleague, node), RevocationRequest::kAsked);
  ASSERT_TRUE(requests.wait_count(1));
  EXPECT_EQ(requests.nodes().size(), 1u);
  holder.unlock();

  // The same for a lease and for a leadership: the intruder's request is refused and not written.
  Semaphore sem(owner, base + "/workers", 2, requests.options<SemaphoreOptions>());
  Election election(owner, base + "/scheduler", requests.options<ElectionOptions>());
  Lease lease = sem.acquire();
  election.campaign();
  for (const std::string& asked :
       {lease.acquisition().node_path, election.leadership()->node_path}) {
    EXPECT_THROW(request_revocation(intruder, asked), NotAuthorizedError) << asked;
    EXPECT_NE(intruder.get(asked)->data.find("\"revocable\":true"), std::string::npos)
        << "the intruder's request was written into " << asked;
    EXPECT_EQ(request_revocation(colleague, asked), RevocationRequest::kAsked);
  }
  ASSERT_TRUE(requests.wait_count(3));
  EXPECT_EQ(lease.state(), LockState::kHeld);
  EXPECT_TRUE(election.is_leader());
  election.resign();
}

}  // namespace
}  // namespace zklock::testing
