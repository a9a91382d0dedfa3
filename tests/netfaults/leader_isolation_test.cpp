// tests/netfaults/leader_isolation_test.cpp: a lock holder attached to the LEADER, when the leader
// is cut from both followers, must be told Lost before a waiter on the majority side is handed the
// lock (issue 20; review 3, item 15).
//
// Three voters with production timing (tickTime=2000, initLimit=10, syncLimit=5), each in its own
// network namespace with a client link and a quorum link (NetnsEnsemble). The holders run in a
// namespace that reaches only the leader L, the waiters in one that reaches only a follower F.
// Then L's quorum link is cut silently: L is cut from both followers while its clients still
// reach it. The stale leader goes on answering its clients - reads, and syncs too (a sync is not a
// quorum operation, ZOOKEEPER-1675) - until it notices, about syncLimit ticks later, that it has
// lost its quorum and steps down. The followers give up on L after syncLimit x tickTime = 10 s of
// silence, elect a new leader, and the new leader expires the holders' sessions T (rounded up to
// its tick) after it took over, and hands their locks to the waiters. What decides safety is how
// long after the new leader's election the stale one still answered syncs: zklock's lag (a whole
// tickTime through any ensemble, docs/sessions.md) and margin must cover it.
//
// Holders, each on its own lock path and fenced store, all sharing the trial's cut, in four client
// configurations (client_config.h): plain, chroot (/zklock-nf), host names (the namespace's own
// hosts file) and all three voters listed (routes reach L only); each as a zklock::Mutex holder
// (fault_holder) and a `zklock exec` holder, with a 4 s and a 10 s session: 16 pairs. The waiters
// use their holder's configuration, pointed at F. For each pair, 5 of 5 trials (20 with
// ZKLOCK_SOAK):
//  * the holder is told Lost (Mutex: its Lost callback or state check; exec: the command got
//    SIGTERM and zklock exits 76) BEFORE its waiter acquires;
//  * fault_checker finds no violation over the holder's and the waiter's logs and the store.
// The test polls the servers' `srvr` every 100 ms while cut and reports, per trial, when the stale
// leader stopped serving and when a new leader was elected. Then the link heals, the old leader
// rejoins as a follower, and the next trial begins (with the new leader). One parseable line per
// (config, client, T), with the lead (how long before the takeover the holder was told):
//   RELIABILITY suite=netfaults scenario=leader-isolation config=... client=mutex|exec ...
//     told_lead_ms_median=... old_leader_down_after_cut_ms_median=...
//     new_leader_after_cut_ms_median=...
#include <algorithm>
#include <array>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "client_config.h"
#include "contenders.h"
#include "cut_trial.h"
#include "fault_env.h"
#include "fenced_store.h"
#include "linked_netns.h"
#include "netns_ensemble.h"
#include "require_netns.h"
#include "support/temp_dir.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing::netfaults {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr std::array<milliseconds, 2> kSessions = {4000ms, 10000ms};
constexpr std::array<ClientConfig, 4> kConfigs = {ClientConfig::kPlain, ClientConfig::kChroot,
                                                  ClientConfig::kHostNames,
                                                  ClientConfig::kAllListed};

struct IsolationSetup {
  std::unique_ptr<NetnsEnsemble> ensemble = NetnsEnsemble::start({});
  LinkedNamespace holders;  // reach only L (routes set per trial)
  LinkedNamespace waiters;  // reach only F
  TempDir dir{"zklock-leader-isolation-"};
  Session monitor{faults::quiet(options_for(ensemble->voters_connect_string(), 10s))};

  IsolationSetup() {
    holders.set_hosts(ensemble->hosts_entries());
    waiters.set_hosts(ensemble->hosts_entries());
    ensure_chroot(monitor);
  }
};

bool has_mark(const TrialMarks& marks, const std::string& name) {
  return std::any_of(marks.begin(), marks.end(), [&](const auto& m) { return m.first == name; });
}

std::vector<CutPairResult> run_trial(IsolationSetup& setup, int trial, unsigned seed) {
  NetnsEnsemble& ensemble = *setup.ensemble;
  const int leader = ensemble.leader();
  if (leader < 0) throw std::runtime_error("no leader at trial " + std::to_string(trial));
  const int follower = (leader + 1) % ensemble.voters();
  setup.holders.reach({ensemble.client_address(leader) + "/32"});
  setup.waiters.reach({ensemble.client_address(follower) + "/32"});
  std::printf(
      "[ NETFAULTS] trial %d: cut leader server.%d from both followers, waiters on "
      "server.%d\n",
      trial, leader + 1, follower + 1);

  std::vector<CutPairPlan> plans;
  for (milliseconds session : kSessions) {
    for (ContenderKind kind : kHolders) {
      for (ClientConfig config : kConfigs) {
        plans.push_back({config, kind, session, &setup.holders.netns(),
                         target_for(config, ensemble, leader), &setup.waiters.netns(),
                         target_for(config, ensemble, follower)});
      }
    }
  }
  // The followers give up on the leader after syncLimit x tickTime (10 s), elect, and the new
  // leader expires the sessions T (plus up to a tick) after that.
  CutContext context{"leader-isolation", setup.monitor, setup.dir.path(),
                     3 * kSessions.back() + 30s};
  CutActions actions;
  actions.cut = [&] { ensemble.cut_quorum(leader); };
  actions.heal = [&] { ensemble.heal_quorum(leader); };
  actions.watch = [&](TrialMarks& marks) {
    if (!has_mark(marks, "old_leader_down") && ensemble.servers().mode(leader) != "leader") {
      marks.emplace_back("old_leader_down", faults::monotonic_ns());
    }
    if (!has_mark(marks, "new_leader")) {
      for (int i = 0; i < ensemble.voters(); ++i) {
        if (i != leader && ensemble.servers().mode(i) == "leader") {
          marks.emplace_back("new_leader", faults::monotonic_ns());
          break;
        }
      }
    }
  };
  auto results = run_cut_trial(context, plans, trial, seed, actions);
  if (!results.empty()) {
    std::string marks;
    for (const auto& [mark, at] : results.front().marks) {
      marks += " " + mark + " " + ms(at - results.front().cut_ns) + " ms";
    }
    std::printf("[ NETFAULTS] trial %d, after the cut:%s\n", trial, marks.c_str());
  }
  if (!ensemble.wait_all_serving(60s)) {
    throw std::runtime_error("server." + std::to_string(leader + 1) +
                             " did not rejoin as a follower within 60 s of the heal (trial " +
                             std::to_string(trial) + ")");
  }
  return results;
}

TEST(LeaderIsolationTest, HolderOnALeaderCutFromItsFollowersIsToldLostBeforeTheWaiterAcquires) {
  ZKLOCK_REQUIRE_NETNS();
  ZKLOCK_REQUIRE_CLI();
  IsolationSetup setup;
  ASSERT_TRUE(setup.ensemble->wait_all_serving(60s))
      << "the ensemble's followers are not all synced at the start";
  std::vector<CutPairResult> results;
  unsigned seed = std::random_device{}();
  std::printf("[ NETFAULTS] seed %u, logs in %s\n", seed, setup.dir.path().c_str());
  for (int trial = 1; trial <= faults::trials(5, 20); ++trial) {
    auto trial_results = run_trial(setup, trial, seed + static_cast<unsigned>(trial));
    results.insert(results.end(), trial_results.begin(), trial_results.end());
  }
  report_and_check("leader-isolation", results, "the holder on the isolated leader");
}

}  // namespace
}  // namespace zklock::testing::netfaults
