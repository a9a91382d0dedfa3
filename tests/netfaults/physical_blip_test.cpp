// tests/netfaults/physical_blip_test.cpp: network blips made by the kernel - keep the lock
// through the short ones, and never stand beside another holder after the long ones
// (docs/reliability.md, "Faults made by the kernel"; issue 11, case 2).
//
// A standalone server in a network namespace of its own. Each holder runs in its own namespace,
// joined to the host by a veth link; a blip silences that link on both ends (tc's blackhole
// qdisc) for d, then heals it. Unlike a proxy, this keeps TCP's own behaviour: the byte stream
// survives, retransmissions and SYNs back off, and after the heal the client hears the server
// again only when its next retransmission or connection attempt goes out. A waiter on the host
// queues behind each holder the whole time. T = 6 s and 10 s; d = 0.5, 0.75, 0.85, 0.9, 1.2 and
// 2 T; a zklock::Mutex holder with default SessionOptions (fault_holder) and `zklock exec`, 5
// trials each (20 with ZKLOCK_SOAK), and at 0.75 T and 1.2 T a zklock::Election leader as well
// (issue 24: kept through the short blip, told before another participant leads after the long).
// The trials of one (T, d) run at once, each on its own namespace, link, lock path and store,
// started at random points of the heartbeat cycle.
//
// Asserted:
//  * 0.5 T and 0.75 T: kept, 5 of 5 (same acquisition, released normally when asked; exec: the
//    command ran on and zklock exited 0);
//  * 0.85 T: kept by the library holder in at least 4 of 5;
//  * 1.2 T and 2 T: lost (the server expired the session), the holder told before the takeover;
//  * every trial: never two holders - the holder told Lost (exec: SIGTERM, exit 76) before its
//    waiter acquired, and fault_checker finds no violation over both logs and the fenced store.
// Measured: time from the heal to the session answering again, for every trial that kept the
// lock - the library holder's Suspended -> Connected (from its log), and for `zklock exec` when
// the test saw it report the lock Held again (polled every 10 ms).
//
// Judged by what was measured, not by what was asked (issue 21; blip_trial.h): the outage runs
// from just before the cut to just after the heal, and a trial whose silence overshot d by more
// than the session's lost margin (T/20) - tc late, or the machine stalled - with an outcome the
// overshoot may have caused is not applicable: re-run, at most 3 times, counted on the line as
// not_applicable=, reported (NOT APPLICABLE) and not judged if it never runs as designed. One
// parseable line per configuration:
//   RELIABILITY suite=netfaults scenario=physical-blip config=plain server=standalone
//     client=mutex|exec|election session_ms=... blip_x_T=... trials=... not_applicable=... kept=...
// The production configurations (chroot, host names, an ensemble, an observer) are in
// production_blip_test.
#include <algorithm>
#include <array>
#include <cstdio>
#include <future>
#include <random>
#include <string>
#include <vector>

#include "blip_trial.h"
#include "contenders.h"
#include "fault_env.h"
#include "linked_netns.h"
#include "require_netns.h"
#include "support/temp_dir.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing::netfaults {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr std::array<double, 6> kBlips = {0.5, 0.75, 0.85, 0.9, 1.2, 2.0};
constexpr int kPerRound = 5;  // trials of one (T, d, client) at once

// Who holds through a blip of `x` T: the Mutex and exec holders always; an Election's leader too
// at 0.75 T (kept) and 1.2 T (lost, told before the next participant leads; issue 24).
std::vector<ContenderKind> holders_for(double x) {
  std::vector<ContenderKind> kinds(kHolders.begin(), kHolders.end());
  if (x == 0.75 || x == 1.2) kinds.push_back(ContenderKind::kElectionLeader);
  return kinds;
}
constexpr std::size_t kMostHolderKinds = kHolders.size() + 1;

// The server, the holders' namespaces (one per concurrent trial), a session on the host that
// watches the queues, and the logs.
struct BlipSetup {
  IpForwarding forwarding;
  LinkedNamespace server_ns;
  std::unique_ptr<ZkServer> server;
  std::vector<std::unique_ptr<LinkedNamespace>> holder_ns;
  TempDir dir{"zklock-physical-blip-"};
  std::unique_ptr<Session> monitor;

  BlipSetup() {
    server_ns.reach({"default"});
    // tickTime 200 ms: the server expires a silent session at most 200 ms after T.
    server = ZkServer::start_in_netns(server_ns.netns(), server_ns.address(),
                                      {200, 1000, 60000, false, {}});
    for (std::size_t i = 0; i < kMostHolderKinds * kPerRound; ++i) {
      holder_ns.push_back(std::make_unique<LinkedNamespace>());
      holder_ns.back()->reach({server_ns.address() + "/32"});
    }
    monitor = std::make_unique<Session>(faults::quiet(options_for(server->connect_string(), 10s)));
  }
};

BlipExpect expectation(double x) {
  if (x <= 0.75) return BlipExpect::kKept;
  if (x > 1) return BlipExpect::kLost;
  return BlipExpect::kAny;
}

void check_edge(const std::vector<BlipResult>& results, milliseconds session, double x) {
  if (x != 0.85) return;
  int trials = 0, kept = 0;
  std::string each;
  for (const auto& r : results) {
    if (r.plan.kind != ContenderKind::kLibraryHolder || !r.applicable) continue;
    ++trials;
    kept += r.kept;
    each += "\n  " + describe(r);
  }
  if (kept * 5 < trials * 4) {
    ADD_FAILURE() << "the library holder kept the lock through a 0.85 T blip in " << kept << " of "
                  << trials << " trials (T = " << session.count()
                  << " ms); at least 4 of 5 expected:" << each;
  }
}

void run_blips(milliseconds session) {
  ZKLOCK_REQUIRE_CLI();
  BlipSetup setup;
  unsigned seed = std::random_device{}();
  std::printf("[ NETFAULTS] T = %lld ms, seed %u, logs in %s\n",
              static_cast<long long>(session.count()), seed, setup.dir.path().c_str());
  const int reps = faults::trials(5, 20);
  for (double x : kBlips) {
    std::vector<BlipResult> results;
    for (int done = 0; done < reps; done += kPerRound) {
      std::vector<std::future<BlipResult>> futures;
      const std::vector<ContenderKind> kinds = holders_for(x);
      for (std::size_t k = 0; k < kinds.size(); ++k) {
        for (int i = done; i < std::min(reps, done + kPerRound); ++i) {
          BlipPlan plan;
          plan.name = "T" + std::to_string(session.count() / 1000) + "-x" + label(x) + "-" +
                      to_string(kinds[k]) + "-" + std::to_string(i + 1);
          plan.server = "standalone";
          plan.kind = kinds[k];
          plan.session = session;
          plan.x = x;
          plan.expect = expectation(x);
          plan.holder_ns =
              setup.holder_ns[k * kPerRound + static_cast<std::size_t>(i - done)].get();
          plan.holder = {setup.server->connect_string(), ""};
          plan.waiter = {setup.server->connect_string(), ""};
          plan.monitor = setup.monitor.get();
          plan.dir = setup.dir.path();
          futures.push_back(std::async(std::launch::async, run_blip, plan, seed += 7));
        }
      }
      for (auto& f : futures) results.push_back(f.get());
    }
    report_blips(results);
    check_edge(results, session, x);
  }
}

TEST(PhysicalBlipTest, SixSecondSessionKeepsTheLockThroughShortBlipsAndIsToldBeforeTakeover) {
  ZKLOCK_REQUIRE_NETNS();
  run_blips(6000ms);
}

TEST(PhysicalBlipTest, TenSecondSessionKeepsTheLockThroughShortBlipsAndIsToldBeforeTakeover) {
  ZKLOCK_REQUIRE_NETNS();
  run_blips(10000ms);
}

}  // namespace
}  // namespace zklock::testing::netfaults
