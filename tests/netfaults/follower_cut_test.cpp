// tests/netfaults/follower_cut_test.cpp: a lock holder whose ZooKeeper server is cut off from the
// leader must be told Lost before a waiter on the leader's side is handed the lock - through a
// follower, and through an observer, in the client configurations production uses
// (docs/reliability.md, "Faults made by the kernel"; issue 11, case 1; issue 20).
//
// Two ensembles with production timing (tickTime=2000, initLimit=10, syncLimit=5), each node in its
// own network namespace with a client link and a quorum link (NetnsEnsemble):
//  * three voters;
//  * three voters and an observer, which syncs from an ObserverMaster on a follower
//    (observerMasterPort, ZooKeeper 3.6+): its sessions reach the leader in two hops, observer ->
//    follower -> leader (review 3, item 15). A separate ensemble, because the library may (and
//    after review 3 does) count a longer lag for every client of an ensemble with observers: the
//    voters-only ensemble keeps testing the tightest lag.
// In each trial two quorum links are cut at the same moment, silently: follower F's in the first
// ensemble, the observer O's in the second. Each goes on answering its clients' reads until it
// notices, after syncLimit x tickTime = 10 s, that its leader (its master) is gone - while its
// leader, which keeps its quorum, expires the holders' sessions T after the last touch that
// reached it, and hands their locks to the waiters.
//
// Holders, each on its own lock path and fenced store, all sharing the trial's cut:
//  * on F, in four client configurations (client_config.h): plain, chroot (/zklock-nf), host
//    names (the holders' namespace's own hosts file), and all three voters listed (routes reach F
//    only);
//  * on O, plain (the observer configuration);
// each as a zklock::Mutex holder (fault_holder) and a `zklock exec` holder, with a 4 s and a 10 s
// session: 20 pairs; and on F, plain and chrooted, a zklock::Election leader and a `zklock elect`
// leader, each with another participant behind it (issue 24): 8 pairs more. The waiters run in
// namespaces that reach only the leader L of their ensemble, in their holder's configuration. For
// each pair:
//  * the holder is told Lost (Mutex, Election: its Lost callback or state check; exec, elect: the
//    command got SIGTERM and zklock exits 76) BEFORE its waiter acquires - 5 of 5 trials (20 with ZKLOCK_SOAK);
//  * fault_checker finds no violation over the holder's and the waiter's logs and the fenced
//    store both write to (two holders, a write after being told, a stale write...).
// Then the links heal, F and O rejoin, and the next trial begins. Which follower the observer
// syncs from (it picks one of the voters' ObserverMaster ports at random; the leader runs none)
// is printed per trial. One parseable line per (scenario, config, client, T):
//   RELIABILITY suite=netfaults scenario=follower-cut|observer-cut config=...
//     client=mutex|exec|election|elect ...
//
// Over TLS (issue 25): with ZKLOCK_NETFAULTS_TLS=1 (ctest's follower_cut_test_over_tls, in a build
// whose C client has TLS) the voters-only ensemble serves TLS too (NetnsEnsemble, test_pki()) and
// only its TLS pairs run: on F, a Mutex holder and a `zklock exec` holder with a 4 s and a 10 s
// session, in the tls configuration (F's TLS port, the "holder" certificate), each with a waiter
// on L's side over TLS - 4 pairs, 5 trials, the same verdicts; and every one of those contenders
// must have spoken TLS (Contender::encrypted). The holder's session goes silent at the cut like any
// other, and zklock's forced reconnects (every ~150 ms while silent) shut down an SSL connection
// under the C client: the run is made under ASan. The observer's ensemble, the other
// configurations and the leaders are left out: the cut they add is not TLS's. The lines say
// config=tls (scenario=follower-cut).
#include <array>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "client_config.h"
#include "contenders.h"
#include "cut_trial.h"
#include "fault_env.h"
#include "linked_netns.h"
#include "netns_ensemble.h"
#include "require_netns.h"
#include "support/four_letter_words.h"
#include "support/temp_dir.h"
#include "support/test_pki.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing::netfaults {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr std::array<milliseconds, 2> kSessions = {4000ms, 10000ms};
constexpr std::array<ClientConfig, 4> kFollowerConfigs = {
    ClientConfig::kPlain, ClientConfig::kChroot, ClientConfig::kHostNames,
    ClientConfig::kAllListed};
constexpr std::array<ClientConfig, 2> kLeaderConfigs = {ClientConfig::kPlain,
                                                        ClientConfig::kChroot};
// Trials of the TLS run (ZKLOCK_NETFAULTS_TLS): see the file comment.
constexpr int kTlsTrials = 5;

NetnsEnsemble::Options with_observer() {
  NetnsEnsemble::Options o;
  o.observers = 1;
  return o;
}

// The voters-only ensemble; over TLS every node serves TLS too.
NetnsEnsemble::Options voters_options(bool tls) {
  NetnsEnsemble::Options o;
  if (tls) o.server.tls = test_pki().server_tls();
  return o;
}

// Everything the trials share: the ensembles, the holders' and the waiters' namespaces, sessions
// on the host that watch the queues, and the directory of logs. Over TLS (tls_runs()) the
// voters-only ensemble serves TLS and the observer's ensemble and namespaces are left out.
struct CutSetup {
  explicit CutSetup(bool over_tls) : tls(over_tls) {
    follower_holders.set_hosts(voters->hosts_entries());
    waiters.set_hosts(voters->hosts_entries());
    if (observed) observer_holders->reach({observed->client_address(observer) + "/32"});
    if (!tls) ensure_chroot(monitor);
  }

  const bool tls;
  std::unique_ptr<NetnsEnsemble> voters = NetnsEnsemble::start(voters_options(tls));
  std::unique_ptr<NetnsEnsemble> observed = tls ? nullptr : NetnsEnsemble::start(with_observer());
  int observer = observed ? observed->voters() : -1;
  LinkedNamespace follower_holders;  // reach only F of `voters` (routes set per trial)
  LinkedNamespace waiters;           // reach only its leader
  // Reach only O of `observed`, and only its leader (nullptr over TLS).
  std::unique_ptr<LinkedNamespace> observer_holders =
      observed ? std::make_unique<LinkedNamespace>() : nullptr;
  std::unique_ptr<LinkedNamespace> observer_waiters =
      observed ? std::make_unique<LinkedNamespace>() : nullptr;
  TempDir dir{"zklock-follower-cut-"};
  // Plain sessions: reading the queues is allowed under the TLS holders' x509 ACL too.
  Session monitor{faults::quiet(options_for(voters->voters_connect_string(), 10s))};
  std::unique_ptr<Session> observed_monitor =
      observed ? std::make_unique<Session>(
                     faults::quiet(options_for(observed->voters_connect_string(), 10s)))
               : nullptr;

  // Every ensemble serves, its followers (and observer) synced.
  bool all_serving(std::chrono::milliseconds timeout) {
    return voters->wait_all_serving(timeout) && (!observed || observed->wait_all_serving(timeout));
  }
};

// The follower the observer syncs from, as the observer's `mntr` tells it ("?" if it does not).
std::string observer_master(NetnsEnsemble& ensemble, int observer) {
  const auto mntr = parse_mntr(ensemble.servers().four_letter(observer, "mntr"));
  const auto it = mntr.find("zk_observer_master_id");
  return it != mntr.end() ? "server." + it->second : "?";
}

int leader_of(NetnsEnsemble& ensemble, int trial) {
  const int leader = ensemble.leader();
  if (leader < 0) throw std::runtime_error("no leader at trial " + std::to_string(trial));
  return leader;
}

// Over TLS: a Mutex holder and a `zklock exec` holder per T on F, each with a waiter on L's side,
// all in the tls configuration.
std::vector<CutPairPlan> tls_plans(CutSetup& setup, int leader, int follower) {
  std::vector<CutPairPlan> plans;
  for (milliseconds session : kSessions) {
    for (ContenderKind kind : kHolders) {
      plans.push_back({ClientConfig::kTls, kind, session, &setup.follower_holders.netns(),
                       target_for(ClientConfig::kTls, *setup.voters, follower),
                       &setup.waiters.netns(),
                       target_for(ClientConfig::kTls, *setup.voters, leader), &setup.monitor});
    }
  }
  return plans;
}

std::vector<CutPairResult> run_trial(CutSetup& setup, int trial, unsigned seed) {
  NetnsEnsemble& voters = *setup.voters;
  const int leader = leader_of(voters, trial);
  const int follower = (leader + 1) % voters.voters();
  setup.follower_holders.reach({voters.client_address(follower) + "/32"});
  setup.waiters.reach({voters.client_address(leader) + "/32"});
  if (setup.tls) {
    std::printf("[ NETFAULTS] trial %d over TLS: cut follower server.%d (leader server.%d)\n",
                trial, follower + 1, leader + 1);
    CutContext context{"cut", setup.monitor, setup.dir.path(), 3 * kSessions.back() + 20s};
    CutActions actions;
    actions.cut = [&] { voters.cut_quorum(follower); };
    actions.heal = [&] { voters.heal_quorum(follower); };
    auto results = run_cut_trial(context, tls_plans(setup, leader, follower), trial, seed, actions);
    if (!voters.wait_all_serving(60s)) {
      throw std::runtime_error("the cut follower did not rejoin within 60 s of the heal (trial " +
                               std::to_string(trial) + ")");
    }
    return results;
  }
  NetnsEnsemble& observed = *setup.observed;
  const int observed_leader = leader_of(observed, trial);
  setup.observer_waiters->reach({observed.client_address(observed_leader) + "/32"});
  std::printf(
      "[ NETFAULTS] trial %d: cut follower server.%d (leader server.%d); cut observer server.%d, "
      "which syncs from %s (leader server.%d)\n",
      trial, follower + 1, leader + 1, setup.observer + 1,
      observer_master(observed, setup.observer).c_str(), observed_leader + 1);

  std::vector<CutPairPlan> plans;
  for (milliseconds session : kSessions) {
    for (ContenderKind kind : kHolders) {
      for (ClientConfig config : kFollowerConfigs) {
        plans.push_back({config, kind, session, &setup.follower_holders.netns(),
                         target_for(config, voters, follower), &setup.waiters.netns(),
                         target_for(config, voters, leader), &setup.monitor});
      }
      plans.push_back({ClientConfig::kObserver, kind, session, &setup.observer_holders->netns(),
                       target_for(ClientConfig::kObserver, observed, setup.observer),
                       &setup.observer_waiters->netns(),
                       target_for(ClientConfig::kPlain, observed, observed_leader),
                       setup.observed_monitor.get()});
    }
    // Leaders (issue 24): an Election's leader on F, and `zklock elect`, each beside another
    // participant on the leader's side - plain and chrooted.
    for (ContenderKind kind : kLeaders) {
      for (ClientConfig config : kLeaderConfigs) {
        plans.push_back({config, kind, session, &setup.follower_holders.netns(),
                         target_for(config, voters, follower), &setup.waiters.netns(),
                         target_for(config, voters, leader), &setup.monitor});
      }
    }
  }
  CutContext context{"cut", setup.monitor, setup.dir.path(), 3 * kSessions.back() + 20s};
  CutActions actions;
  actions.cut = [&] {
    voters.cut_quorum(follower);
    observed.cut_quorum(setup.observer);
  };
  actions.heal = [&] {
    voters.heal_quorum(follower);
    observed.heal_quorum(setup.observer);
  };
  auto results = run_cut_trial(context, plans, trial, seed, actions);
  for (NetnsEnsemble* ensemble : {&voters, &observed}) {
    if (!ensemble->wait_all_serving(60s)) {
      throw std::runtime_error("a cut node did not rejoin within 60 s of the heal (trial " +
                               std::to_string(trial) + ")");
    }
  }
  return results;
}

TEST(FollowerCutTest, HolderOnAFollowerOrObserverCutFromTheLeaderIsToldLostBeforeTheWaiter) {
  ZKLOCK_REQUIRE_NETNS();
  ZKLOCK_REQUIRE_CLI();
  const bool tls = tls_runs();
  if (tls) {
    ASSERT_TRUE(Session::tls_available())
        << "ZKLOCK_NETFAULTS_TLS is set, but this zklock's C client has no TLS";
  }
  CutSetup setup(tls);
  ASSERT_TRUE(setup.all_serving(60s))
      << "the ensembles' followers and observer are not all synced at the start";
  std::vector<CutPairResult> follower_results, observer_results;
  unsigned seed = std::random_device{}();
  std::printf("[ NETFAULTS] seed %u, logs in %s%s\n", seed, setup.dir.path().c_str(),
              tls ? ", over TLS" : "");
  for (int trial = 1; trial <= faults::trials(tls ? kTlsTrials : 5, 20); ++trial) {
    for (auto& r : run_trial(setup, trial, seed + static_cast<unsigned>(trial))) {
      (r.config == ClientConfig::kObserver ? observer_results : follower_results).push_back(r);
    }
  }
  report_and_check("follower-cut", follower_results, "the holder on the cut-off follower");
  if (!tls)
    report_and_check("observer-cut", observer_results, "the holder on the cut-off observer");
}

}  // namespace
}  // namespace zklock::testing::netfaults
