// tests/netfaults/follower_cut_test.cpp: a lock holder whose ZooKeeper server is cut off from the
// leader must be told Lost before a waiter on the leader's side is handed the lock
// (docs/reliability.md, "Faults made by the kernel"; issue 11, case 1).
//
// Three servers with production timing (tickTime=2000, initLimit=10, syncLimit=5), each in its own
// network namespace with a client link and a quorum link (NetnsEnsemble). The holders run in a
// namespace that reaches only follower F, the waiters in one that reaches only the leader L. Then
// F's quorum link is cut silently: F goes on answering its clients' reads until it notices, after
// syncLimit x tickTime = 10 s, that the leader is gone - while the leader expires the holders'
// sessions T after the last touch F forwarded, and hands their locks to the waiters.
//
// In each trial, four holders on four lock paths share one cut: a zklock::Mutex holder
// (fault_holder) and a `zklock exec` holder, each with a 4 s and a 10 s session. For each:
//  * the holder is told Lost (Mutex: its Lost callback or state check; exec: the command got
//    SIGTERM and zklock exits 76) BEFORE its waiter acquires - 5 of 5 trials (20 with ZKLOCK_SOAK);
//  * fault_checker finds no violation over the holder's and the waiter's logs and the fenced
//    store both write to (two holders, a write after being told, a stale write...).
// Then the link heals, F rejoins, and the next trial begins. One parseable line per (client, T):
//   RELIABILITY suite=netfaults scenario=follower-cut client=mutex|exec session_ms=... ...
#include <algorithm>
#include <array>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "contenders.h"
#include "fault_checker.h"
#include "fault_env.h"
#include "fenced_store.h"
#include "linked_netns.h"
#include "netns_ensemble.h"
#include "require_netns.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing::netfaults {
namespace {

using namespace std::chrono_literals;
using faults::FaultLog;
using faults::FencedStore;
using std::chrono::milliseconds;

constexpr std::array<milliseconds, 2> kSessions = {4000ms, 10000ms};
constexpr std::array<ContenderKind, 2> kHolders = {ContenderKind::kLibraryHolder,
                                                   ContenderKind::kExecHolder};

// One holder, its waiter and their store, in one trial.
struct Pair {
  ContenderKind kind;
  milliseconds session;
  std::string name;
  std::unique_ptr<FencedStore> store;
  std::unique_ptr<Contender> holder;
  std::unique_ptr<Contender> waiter;
};

struct PairResult {
  int trial = 0;
  ContenderKind kind = ContenderKind::kLibraryHolder;
  milliseconds session{0};
  std::string error;  // the trial could not run as designed
  std::int64_t cut_ns = 0;
  PairOutcome outcome;
  std::string evidence;
};

std::string describe(const PairResult& r) {
  std::string text = "trial " + std::to_string(r.trial) + ", " + to_string(r.kind) +
                     ", T=" + std::to_string(r.session.count()) + " ms: ";
  const auto& o = r.outcome;
  text += o.told_ns == 0 ? "holder never told Lost"
                         : "holder told Lost " + ms(o.told_ns - r.cut_ns) + " ms after the cut";
  if (o.fenced_ns != 0) {
    text += " (fenced out by the store " + ms(o.fenced_ns - r.cut_ns) + " ms after the cut)";
  }
  text += o.taken_ns == 0 ? ", waiter never acquired"
                          : ", waiter acquired " + ms(o.taken_ns - r.cut_ns) + " ms after the cut";
  if (o.told_ns != 0 && o.taken_ns != 0) {
    text += o.told_ns < o.taken_ns ? " (told " + ms(o.taken_ns - o.told_ns) + " ms before)"
                                   : " (told " + ms(o.told_ns - o.taken_ns) + " ms AFTER)";
  }
  return text;
}

// Everything the trials share: the ensemble, the holders' and the waiters' namespaces, a session
// on the host that watches the queues, and the directory of logs.
struct CutSetup {
  std::unique_ptr<NetnsEnsemble> ensemble = NetnsEnsemble::start({});
  LinkedNamespace holder_ns;  // reaches only F (routes set per trial)
  LinkedNamespace waiter_ns;  // reaches only L
  TempDir dir{"zklock-follower-cut-"};
  Session monitor{quiet_session(ensemble->servers().connect_string())};

  static SessionOptions quiet_session(const std::string& connect) {
    SessionOptions o = options_for(connect, 10s);
    o.log_level = LogLevel::kError;
    o.log_sink = [](LogLevel, std::string_view) {};
    return o;
  }
};

// One trial: four holders on F, four waiters on L, one cut of F's quorum link, heal, rejoin.
std::vector<PairResult> run_trial(CutSetup& setup, int trial, unsigned seed) {
  NetnsEnsemble& ensemble = *setup.ensemble;
  const int leader = ensemble.leader();
  if (leader < 0) throw std::runtime_error("no leader at trial " + std::to_string(trial));
  const int follower = (leader + 1) % ensemble.size();
  setup.holder_ns.reach({ensemble.client_address(follower) + "/32"});
  setup.waiter_ns.reach({ensemble.client_address(leader) + "/32"});
  FaultLog faults(setup.dir.file("trial" + std::to_string(trial) + ".faults"));

  std::vector<Pair> pairs;
  std::vector<PairResult> results;
  for (milliseconds session : kSessions) {
    for (ContenderKind kind : kHolders) {
      Pair p{kind,
             session,
             "t" + std::to_string(trial) + "-" + to_string(kind) + "-" +
                 std::to_string(session.count() / 1000) + "s",
             nullptr,
             nullptr,
             nullptr};
      p.store =
          FencedStore::start(setup.dir.file(p.name + ".sock"), setup.dir.file(p.name + ".store"));
      p.holder = std::make_unique<Contender>(
          kind, &setup.holder_ns.netns(),
          ContenderSpec{p.name + "-holder", setup.dir.path(), ensemble.connect_string(follower),
                        unique_path("follower-cut-" + p.name), session, p.store->socket_path()});
      PairResult r;
      r.trial = trial;
      r.kind = kind;
      r.session = session;
      results.push_back(r);
      pairs.push_back(std::move(p));
    }
  }
  auto fail_all = [&](const std::string& why) {
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      results[i].error = why;
      results[i].evidence = pairs[i].holder->evidence();
    }
    return results;
  };
  if (!wait_until(
          [&] {
            return std::all_of(pairs.begin(), pairs.end(),
                               [](const Pair& p) { return p.holder->acquired_ns() != 0; });
          },
          30s)) {
    return fail_all("a holder on the follower did not acquire within 30 s");
  }
  for (auto& p : pairs) {
    p.waiter = std::make_unique<Contender>(
        ContenderKind::kWaiter, &setup.waiter_ns.netns(),
        ContenderSpec{p.name + "-waiter", setup.dir.path(), ensemble.connect_string(leader),
                      p.holder->spec().path, p.session, p.store->socket_path()});
  }
  if (!wait_until(
          [&] {
            return std::all_of(pairs.begin(), pairs.end(), [&](const Pair& p) {
              return lock_children(setup.monitor, p.holder->spec().path).size() == 2;
            });
          },
          30s)) {
    return fail_all("a waiter on the leader did not queue within 30 s");
  }

  // The cut starts at a random point of the holders' heartbeat cycles.
  std::this_thread::sleep_for(milliseconds(std::mt19937(seed)() % 1000));
  faults.record("cut-quorum", "node" + std::to_string(follower));
  ensemble.cut_quorum(follower);
  const std::int64_t cut_ns = faults::monotonic_ns();

  // Settled: every waiter acquired, and every holder was told or is gone. A holder that is never
  // told shows up below as "never told", not as a hang.
  wait_until(
      [&] {
        return std::all_of(pairs.begin(), pairs.end(), [](Pair& p) {
          return p.waiter->acquired_ns() != 0 &&
                 (p.holder->told_lost_ns() != 0 || !p.holder->process().running());
        });
      },
      3 * kSessions.back() + 20s, 50ms);

  ensemble.heal_quorum(follower);
  faults.record("heal", "node" + std::to_string(follower));
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    Pair& p = pairs[i];
    results[i].cut_ns = cut_ns;
    results[i].outcome = judge_pair(*p.holder, *p.waiter, *p.store, faults, 20s);
    results[i].evidence = p.holder->evidence() + "\n" + p.waiter->evidence();
  }
  if (!ensemble.wait_rejoined(follower, 60s)) {
    throw std::runtime_error("node " + std::to_string(follower) +
                             " did not rejoin within 60 s of the heal (trial " +
                             std::to_string(trial) + ")");
  }
  return results;
}

void report_and_check(const std::vector<PairResult>& results) {
  for (ContenderKind kind : kHolders) {
    for (milliseconds session : kSessions) {
      int trials = 0, told_first = 0, two_holders = 0;
      std::size_t violations = 0;
      std::vector<std::int64_t> told_after_cut, taken_after_cut, leads;
      for (const auto& r : results) {
        if (r.kind != kind || r.session != session) continue;
        ++trials;
        const PairOutcome& o = r.outcome;
        told_first += o.told_first();
        two_holders += o.taken_ns != 0 && !o.told_first();
        violations += o.report.violations.size();
        if (o.told_ns != 0) told_after_cut.push_back(o.told_ns - r.cut_ns);
        if (o.taken_ns != 0) taken_after_cut.push_back(o.taken_ns - r.cut_ns);
        if (o.told_ns != 0 && o.taken_ns != 0) leads.push_back(o.taken_ns - o.told_ns);
      }
      std::printf(
          "RELIABILITY suite=netfaults scenario=follower-cut client=%s session_ms=%lld trials=%d "
          "told_before_takeover=%d two_holders=%d violations=%zu told_after_cut_ms_median=%s "
          "told_after_cut_ms_worst=%s takeover_after_cut_ms_median=%s told_lead_ms_median=%s "
          "told_lead_ms_worst=%s\n",
          to_string(kind), static_cast<long long>(session.count()), trials, told_first, two_holders,
          violations, faults::ms_median(told_after_cut).c_str(),
          faults::ms_max(told_after_cut).c_str(), faults::ms_median(taken_after_cut).c_str(),
          faults::ms_median(leads).c_str(), faults::ms_min(leads).c_str());
    }
  }
  std::fflush(stdout);

  // One failure per pair that went wrong, saying what and when, with the evidence.
  for (const auto& r : results) {
    const PairOutcome& o = r.outcome;
    std::string problems;
    if (!r.error.empty()) {
      problems += "\n  the trial could not run: " + r.error;
    } else {
      if (o.taken_ns == 0) problems += "\n  the waiter on the leader never acquired";
      if (!o.told_first()) {
        problems +=
            "\n  the holder on the cut-off follower was not told Lost before its waiter "
            "acquired: two holders";
      }
      if (!o.report.violations.empty()) problems += "\n  fault_checker: " + summarize(o.report);
      if (r.kind == ContenderKind::kExecHolder &&
          !(o.holder_status && WIFEXITED(*o.holder_status) &&
            WEXITSTATUS(*o.holder_status) == 76)) {
        problems += "\n  zklock exec did not exit 76 (lock lost): " +
                    (o.holder_status ? describe_wait_status(*o.holder_status)
                                     : std::string("still running"));
      }
    }
    if (!problems.empty()) ADD_FAILURE() << describe(r) << problems << "\n" << r.evidence;
  }
}

TEST(FollowerCutTest, HolderOnAFollowerCutFromTheLeaderIsToldLostBeforeTheWaiterAcquires) {
  ZKLOCK_REQUIRE_NETNS();
  ASSERT_FALSE(zklock_cli_path().empty())
      << "the zklock CLI (target zklock-cli) is not built: the `zklock exec` half cannot run";
  CutSetup setup;
  const int leader = setup.ensemble->leader();
  ASSERT_GE(leader, 0);
  ASSERT_TRUE(setup.ensemble->wait_rejoined((leader + 1) % setup.ensemble->size(), 60s))
      << "the ensemble's followers are not all synced at the start";
  std::vector<PairResult> results;
  unsigned seed = std::random_device{}();
  std::printf("[ NETFAULTS] seed %u, logs in %s\n", seed, setup.dir.path().c_str());
  for (int trial = 1; trial <= faults::trials(5, 20); ++trial) {
    auto trial_results = run_trial(setup, trial, seed + static_cast<unsigned>(trial));
    results.insert(results.end(), trial_results.begin(), trial_results.end());
  }
  report_and_check(results);
}

}  // namespace
}  // namespace zklock::testing::netfaults
