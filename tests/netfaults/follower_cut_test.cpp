// tests/netfaults/follower_cut_test.cpp: a lock holder whose ZooKeeper server is cut off from the
// leader must be told Lost before a waiter on the leader's side is handed the lock - through a
// follower, and through an observer, in the client configurations production uses
// (docs/reliability.md, "Faults made by the kernel"; issue 11, case 1; issue 20).
//
// Three voters and one observer with production timing (tickTime=2000, initLimit=10, syncLimit=5),
// each in its own network namespace with a client link and a quorum link (NetnsEnsemble). The
// observer syncs from an ObserverMaster on a follower (observerMasterPort, ZooKeeper 3.6+): its
// sessions reach the leader in two hops, observer -> follower -> leader (review 3, item 15). In
// each trial two quorum links are cut at once, silently: follower F's and the observer O's. Each
// goes on answering its clients' reads until it notices, after syncLimit x tickTime = 10 s, that
// its leader (its master) is gone - while the leader, which keeps its quorum (itself and the other
// follower), expires the holders' sessions T after the last touch that reached it, and hands their
// locks to the waiters.
//
// Holders, each on its own lock path and fenced store, all sharing the trial's cut:
//  * on F, in four client configurations (client_config.h): plain, chroot (/zklock-nf), host
//    names (the holders' namespace's own hosts file), and all three voters listed (routes reach F
//    only);
//  * on O, plain (the observer configuration);
// each as a zklock::Mutex holder (fault_holder) and a `zklock exec` holder, with a 4 s and a 10 s
// session: 20 pairs. The waiters run in a namespace that reaches only the leader L, in their
// holder's configuration. For each pair:
//  * the holder is told Lost (Mutex: its Lost callback or state check; exec: the command got
//    SIGTERM and zklock exits 76) BEFORE its waiter acquires - 5 of 5 trials (20 with ZKLOCK_SOAK);
//  * fault_checker finds no violation over the holder's and the waiter's logs and the fenced
//    store both write to (two holders, a write after being told, a stale write...).
// Then the links heal, F and O rejoin, and the next trial begins. One parseable line per
// (scenario, config, client, T):
//   RELIABILITY suite=netfaults scenario=follower-cut|observer-cut config=... client=mutex|exec ...
//
// The observer's cut shares the trial with the follower's (one trial, not two: the suite's time
// is CI's): both are cut at the same moment, the leader keeps its quorum, and each holder is
// judged on its own pair. Which follower the observer syncs from (it picks one of the voters'
// ObserverMaster ports at random; the leader runs none) is printed per trial.
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
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing::netfaults {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr std::array<milliseconds, 2> kSessions = {4000ms, 10000ms};
constexpr std::array<ContenderKind, 2> kHolders = {ContenderKind::kLibraryHolder,
                                                   ContenderKind::kExecHolder};
constexpr std::array<ClientConfig, 4> kFollowerConfigs = {
    ClientConfig::kPlain, ClientConfig::kChroot, ClientConfig::kHostNames,
    ClientConfig::kAllListed};

NetnsEnsemble::Options with_observer() {
  NetnsEnsemble::Options o;
  o.observers = 1;
  return o;
}

// Everything the trials share: the ensemble, the holders' and the waiters' namespaces, a session
// on the host that watches the queues, and the directory of logs.
struct CutSetup {
  std::unique_ptr<NetnsEnsemble> ensemble = NetnsEnsemble::start(with_observer());
  LinkedNamespace follower_holders;  // reach only F (routes set per trial)
  LinkedNamespace observer_holders;  // reach only O
  LinkedNamespace waiters;           // reach only L
  TempDir dir{"zklock-follower-cut-"};
  Session monitor{faults::quiet(options_for(ensemble->voters_connect_string(), 10s))};
  int observer = ensemble->voters();

  CutSetup() {
    for (LinkedNamespace* ns : {&follower_holders, &observer_holders, &waiters}) {
      ns->set_hosts(ensemble->hosts_entries());
    }
    observer_holders.reach({ensemble->client_address(observer) + "/32"});
    ensure_chroot(monitor);
  }
};

// The follower the observer syncs from, as the observer's `mntr` tells it ("?" if it does not).
std::string observer_master(NetnsEnsemble& ensemble, int observer) {
  const auto mntr = parse_mntr(ensemble.servers().four_letter(observer, "mntr"));
  for (const char* key : {"zk_observer_master_id", "zk_learner_master_id"}) {
    const auto it = mntr.find(key);
    if (it != mntr.end()) return "server." + it->second;
  }
  return "?";
}

std::vector<CutPairResult> run_trial(CutSetup& setup, int trial, unsigned seed) {
  NetnsEnsemble& ensemble = *setup.ensemble;
  const int leader = ensemble.leader();
  if (leader < 0) throw std::runtime_error("no leader at trial " + std::to_string(trial));
  const int follower = (leader + 1) % ensemble.voters();
  setup.follower_holders.reach({ensemble.client_address(follower) + "/32"});
  setup.waiters.reach({ensemble.client_address(leader) + "/32"});
  std::printf(
      "[ NETFAULTS] trial %d: leader server.%d, cut follower server.%d and observer "
      "server.%d (which syncs from %s)\n",
      trial, leader + 1, follower + 1, setup.observer + 1,
      observer_master(ensemble, setup.observer).c_str());

  std::vector<CutPairPlan> plans;
  for (milliseconds session : kSessions) {
    for (ContenderKind kind : kHolders) {
      for (ClientConfig config : kFollowerConfigs) {
        plans.push_back({config, kind, session, &setup.follower_holders.netns(),
                         target_for(config, ensemble, follower), &setup.waiters.netns(),
                         target_for(config, ensemble, leader)});
      }
      plans.push_back({ClientConfig::kObserver, kind, session, &setup.observer_holders.netns(),
                       target_for(ClientConfig::kObserver, ensemble, setup.observer),
                       &setup.waiters.netns(), target_for(ClientConfig::kPlain, ensemble, leader)});
    }
  }
  CutContext context{"cut", setup.monitor, setup.dir.path(), 3 * kSessions.back() + 20s};
  CutActions actions;
  actions.cut = [&] {
    ensemble.cut_quorum(follower);
    ensemble.cut_quorum(setup.observer);
  };
  actions.heal = [&] {
    ensemble.heal_quorum(follower);
    ensemble.heal_quorum(setup.observer);
  };
  auto results = run_cut_trial(context, plans, trial, seed, actions);
  if (!ensemble.wait_all_serving(60s)) {
    throw std::runtime_error("server." + std::to_string(follower + 1) + " or the observer did " +
                             "not rejoin within 60 s of the heal (trial " + std::to_string(trial) +
                             ")");
  }
  return results;
}

TEST(FollowerCutTest, HolderOnAFollowerOrObserverCutFromTheLeaderIsToldLostBeforeTheWaiter) {
  ZKLOCK_REQUIRE_NETNS();
  ASSERT_FALSE(zklock_cli_path().empty())
      << "the zklock CLI (target zklock-cli) is not built: the `zklock exec` half cannot run";
  CutSetup setup;
  ASSERT_TRUE(setup.ensemble->wait_all_serving(60s))
      << "the ensemble's followers and observer are not all synced at the start";
  std::vector<CutPairResult> follower_results, observer_results;
  unsigned seed = std::random_device{}();
  std::printf("[ NETFAULTS] seed %u, logs in %s\n", seed, setup.dir.path().c_str());
  for (int trial = 1; trial <= faults::trials(5, 20); ++trial) {
    for (auto& r : run_trial(setup, trial, seed + static_cast<unsigned>(trial))) {
      (r.config == ClientConfig::kObserver ? observer_results : follower_results).push_back(r);
    }
  }
  report_and_check("follower-cut", follower_results, "the holder on the cut-off follower");
  report_and_check("observer-cut", observer_results, "the holder on the cut-off observer");
}

}  // namespace
}  // namespace zklock::testing::netfaults
