// tests/netfaults/production_blip_test.cpp: physical blips (a holder's own link blackholed on both
// ends for d, then healed; blip_trial.h) in the client configurations production uses (issue 20):
// keep the lock through the short ones, and never stand beside another holder after the long ones.
//
// Three servers, every node in a namespace of its own:
//  * the standalone server of physical_blip_test (tickTime 200 ms), for
//      - chroot: "ADDRESS:PORT/zklock-nf" (the chroot made beforehand);
//      - host names: "NAME:PORT", NAME in the holder's namespace's hosts file (zklock's forced
//        reconnects make the C client resolve it again at every attempt);
//  * a production-timed ensemble of 3 voters (tickTime 2000, syncLimit 5; NetnsEnsemble), for
//      - all listed: the three voters' addresses, all reachable - the blip cuts the holder from all
//        of them, and after the heal the C client may come back through any of them;
//  * a production-timed ensemble of 3 voters and 1 observer behind an ObserverMaster, for
//      - observer: the observer's address only (its touches reach the leader in two hops).
// Waiters on the host: the server's address (with the chroot for the chroot trials), or the
// ensemble's three voters.
//
// Sizes. The budget of a kept blip is T - i - m - r on a standalone server and T - 2i - l - m - r
// on an ensemble (docs/sessions.md, "The arithmetic"): i = T/20, m = T/20 (T/10 for zklock exec),
// r = 150 ms, and the lag l = a whole tickTime on any ensemble - 2 s here, which the session learns
// from the timeout a probe session is granted (minSessionTimeout = 2 x tickTime). One size on each
// side of what decides safety; the other sizes are physical_blip_test's (plain, six sizes):
//  * kept: 0.75 T for host names and chroot (standalone: budget 0.875 T for Mutex, 0.825 T for
//    exec, as the plain trials; through a chroot zklock still reads /zookeeper/config - the C
//    client's getconfig ignores the chroot), 0.25 T for all listed and the observer (budget at
//    T = 6 s: 2.95 s for Mutex, 2.65 s for exec; at T = 10 s: 6.35 s and 5.85 s) - kept 5 of 5;
//  * lost: 1.2 T, past the server's expiry - lost, and told before the waiter acquires, 5 of 5.
// In every trial never two holders (told before the waiter acquired) and no fault_checker
// violation. T = 6 s and 10 s (physical_blip_test's), Mutex (fault_holder) and `zklock exec`, 5
// trials each. All trials of one (T, kept|lost) run at once - 40, each in its own namespace, on its
// own lock path and store, staggered and at random points of the heartbeat cycle: four rounds in
// all, about a minute.
//
// Judged by what was measured (issue 21, blip_trial.h): a trial whose silence overshot d by more
// than T/20 (tc late, or the machine stalled), with an outcome the overshoot may have caused, is
// not applicable: re-run (at most 3 times), counted as not_applicable=, and reported (NOT
// APPLICABLE) but not judged if it never ran as designed. One parseable line per (config,
// client, T, d):
//   RELIABILITY suite=netfaults scenario=physical-blip config=chroot|hostnames|all-listed|observer
//     server=standalone|ensemble client=mutex|exec session_ms=... blip_x_T=... kept=... ...
//
// Over TLS (issue 25): with ZKLOCK_NETFAULTS_TLS=1 (ctest's production_blip_test_over_tls, in a
// build whose C client has TLS) the standalone server serves TLS too, and only the tls
// configuration runs: its TLS port and the "holder" certificate for the holder (in its namespace)
// and the waiter (on the host). Mutex and `zklock exec`, T = 6 s and 10 s, kept 0.75 T (the budget
// is the plain standalone server's: the handshake after the heal is the only extra, within the
// margins) and lost 1.2 T, 5 trials each at once - 10 per round, four rounds; and every one of
// those contenders must have spoken TLS (Contender::encrypted). During the blip zklock's forced
// reconnects shut down connects still in SYN_SENT, and after the heal an SSL connection is made
// again: the run is made under ASan. The ensembles are not started. The lines say config=tls
// server=standalone.
#include <array>
#include <cstdio>
#include <future>
#include <random>
#include <string>
#include <vector>

#include "blip_trial.h"
#include "client_config.h"
#include "contenders.h"
#include "cut_trial.h"
#include "fault_env.h"
#include "linked_netns.h"
#include "netns_ensemble.h"
#include "require_netns.h"
#include "support/temp_dir.h"
#include "support/test_pki.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing::netfaults {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr std::array<milliseconds, 2> kSessions = {6000ms, 10000ms};
constexpr std::array<ClientConfig, 4> kConfigs = {ClientConfig::kChroot, ClientConfig::kHostNames,
                                                  ClientConfig::kAllListed,
                                                  ClientConfig::kObserver};
constexpr int kTrials = 5;  // of one (config, client, T, d), all at once
constexpr double kLost = 1.2;

bool on_standalone(ClientConfig config) {
  return config == ClientConfig::kChroot || config == ClientConfig::kHostNames ||
         config == ClientConfig::kTls;
}

// The longest blip each configuration is asserted to keep (see the file comment).
double kept_size(ClientConfig config) { return on_standalone(config) ? 0.75 : 0.25; }

NetnsEnsemble::Options with_observer() {
  NetnsEnsemble::Options o;
  o.observers = 1;
  return o;
}

// Everything the rounds share. Over TLS (tls_runs()) the standalone server serves TLS too, and
// the ensembles (and their monitors) are left out: the tls configuration needs neither.
struct ProductionSetup {
  const bool tls;
  // kConfigs; over TLS the standalone server's TLS port alone.
  const std::vector<ClientConfig> configs =
      tls ? std::vector<ClientConfig>{ClientConfig::kTls}
          : std::vector<ClientConfig>(kConfigs.begin(), kConfigs.end());
  IpForwarding forwarding;
  LinkedNamespace server_ns;
  std::unique_ptr<ZkServer> server;
  std::unique_ptr<NetnsEnsemble> ensemble = tls ? nullptr : NetnsEnsemble::start({});
  std::unique_ptr<NetnsEnsemble> observed = tls ? nullptr : NetnsEnsemble::start(with_observer());
  int observer = observed ? observed->voters() : -1;
  // One namespace per concurrent trial, by configuration and client.
  std::vector<std::unique_ptr<LinkedNamespace>> holder_ns;
  TempDir dir{"zklock-production-blip-"};
  std::unique_ptr<Session> server_monitor;
  std::unique_ptr<Session> ensemble_monitor;
  std::unique_ptr<Session> observed_monitor;
  std::string server_name = netns_name_prefix() + "-zk";

  explicit ProductionSetup(bool over_tls) : tls(over_tls) {
    server_ns.reach({"default"});
    // tickTime 200 ms, as physical_blip_test: the server expires a silent session at most 200 ms
    // after T.
    ServerOptions options{200, 1000, 60000, false, {}};
    if (tls) options.tls = test_pki().server_tls();
    server = ZkServer::start_in_netns(server_ns.netns(), server_ns.address(), options);
    for (ClientConfig config : configs) {
      for (std::size_t i = 0; i < kHolders.size() * kTrials; ++i) {
        auto ns = std::make_unique<LinkedNamespace>();
        if (config == ClientConfig::kAllListed) {
          std::vector<std::string> voters;
          for (int v = 0; v < ensemble->voters(); ++v) {
            voters.push_back(ensemble->client_address(v) + "/32");
          }
          ns->reach(voters);
        } else if (config == ClientConfig::kObserver) {
          ns->reach({observed->client_address(observer) + "/32"});
        } else {
          ns->reach({server_ns.address() + "/32"});
        }
        if (config == ClientConfig::kHostNames) ns->set_hosts({{server_ns.address(), server_name}});
        holder_ns.push_back(std::move(ns));
      }
    }
    // Plain, also over TLS: reading the queues is allowed under the TLS holders' x509 ACL.
    server_monitor =
        std::make_unique<Session>(faults::quiet(options_for(server->connect_string(), 10s)));
    if (tls) return;
    ensemble_monitor = std::make_unique<Session>(
        faults::quiet(options_for(ensemble->voters_connect_string(), 10s)));
    observed_monitor = std::make_unique<Session>(
        faults::quiet(options_for(observed->voters_connect_string(), 10s)));
    ensure_chroot(*server_monitor);
  }

  // Every ensemble serves, its followers (and observer) synced; true when there are none.
  bool ensembles_serving(std::chrono::milliseconds timeout) {
    return tls || (ensemble->wait_all_serving(timeout) && observed->wait_all_serving(timeout));
  }

  LinkedNamespace& ns_for(std::size_t config_index, std::size_t kind_index, int trial) {
    return *holder_ns[(config_index * kHolders.size() + kind_index) * kTrials +
                      static_cast<std::size_t>(trial)];
  }

  ClientTarget holder_target(ClientConfig config) const {
    switch (config) {
      case ClientConfig::kChroot:
        return {server->connect_string() + kChroot, kChroot};
      case ClientConfig::kHostNames:
        return {server_name + ":" + std::to_string(server->port()), ""};
      case ClientConfig::kObserver:
        return target_for(config, *observed, observer);
      case ClientConfig::kTls:
        return {server->tls_connect_string(), "", tls_client()};
      default:
        return target_for(config, *ensemble, 0);  // all listed: every voter
    }
  }
  // Waiters run on the host: addresses (no hosts file there), the holder's chroot.
  ClientTarget waiter_target(ClientConfig config) const {
    if (config == ClientConfig::kTls) return holder_target(config);
    if (on_standalone(config)) {
      return {server->connect_string() + holder_target(config).chroot,
              holder_target(config).chroot};
    }
    return {(config == ClientConfig::kObserver ? observed : ensemble)->voters_connect_string(), ""};
  }
  Session* monitor_for(ClientConfig config) const {
    if (on_standalone(config)) return server_monitor.get();
    return (config == ClientConfig::kObserver ? observed_monitor : ensemble_monitor).get();
  }
};

std::vector<BlipResult> run_round(ProductionSetup& setup, milliseconds session, bool lost,
                                  unsigned& seed) {
  std::vector<std::future<BlipResult>> futures;
  for (std::size_t c = 0; c < setup.configs.size(); ++c) {
    const ClientConfig config = setup.configs[c];
    const double x = lost ? kLost : kept_size(config);
    for (std::size_t k = 0; k < kHolders.size(); ++k) {
      for (int i = 0; i < kTrials; ++i) {
        BlipPlan plan;
        plan.name = "T" + std::to_string(session.count() / 1000) + "-x" + label(x) + "-" +
                    to_string(config) + "-" + to_string(kHolders[k]) + "-" + std::to_string(i + 1);
        plan.config = config;
        plan.server = on_standalone(config) ? "standalone" : "ensemble";
        plan.kind = kHolders[k];
        plan.session = session;
        plan.x = x;
        plan.expect = lost ? BlipExpect::kLost : BlipExpect::kKept;
        plan.holder_ns = &setup.ns_for(c, k, i);
        plan.holder = setup.holder_target(config);
        plan.waiter = setup.waiter_target(config);
        plan.monitor = setup.monitor_for(config);
        // The lag through the ensemble: its tickTime (NetnsEnsemble's production timing).
        plan.lag =
            on_standalone(config) ? 0ms : milliseconds(NetnsEnsemble::Options{}.server.tick_ms);
        plan.dir = setup.dir.path();
        futures.push_back(std::async(std::launch::async, run_blip, plan, seed += 7));
      }
    }
  }
  std::vector<BlipResult> results;
  for (auto& f : futures) results.push_back(f.get());
  return results;
}

TEST(ProductionBlipTest, ChrootHostNamesAllListedAndObserverKeepShortBlipsAndAreToldFirst) {
  ZKLOCK_REQUIRE_NETNS();
  ZKLOCK_REQUIRE_CLI();
  const bool tls = tls_runs();
  if (tls) {
    ASSERT_TRUE(Session::tls_available())
        << "ZKLOCK_NETFAULTS_TLS is set, but this zklock's C client has no TLS";
  }
  ProductionSetup setup(tls);
  ASSERT_TRUE(setup.ensembles_serving(60s))
      << "the ensembles' followers and observer are not all synced at the start";
  unsigned seed = std::random_device{}();
  std::printf("[ NETFAULTS] seed %u, logs in %s%s\n", seed, setup.dir.path().c_str(),
              tls ? ", over TLS" : "");
  for (milliseconds session : kSessions) {
    for (bool lost : {false, true}) {
      report_blips(run_round(setup, session, lost, seed));
      // Only clients were cut; the next round starts on serving ensembles all the same.
      ASSERT_TRUE(setup.ensembles_serving(60s)) << "an ensemble stopped serving";
    }
  }
}

}  // namespace
}  // namespace zklock::testing::netfaults
