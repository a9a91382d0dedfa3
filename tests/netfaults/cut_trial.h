// tests/netfaults/cut_trial.h: one trial of a "cut" scenario, and its verdict - the part that
// follower_cut_test and leader_isolation_test share.
//
// A trial: every planned holder acquires (each on its own lock path and fenced store, attached to
// its own server in its own client configuration); a waiter queues behind each; at a random point
// of the heartbeat cycles the scenario's cut is made (CutActions::cut); the trial waits until
// every waiter acquired and every holder was told Lost (or exited); then the cut is healed and
// each pair is judged (judge_pair: told first, fault_checker over both logs and the store; and a
// pair that was to speak TLS, its targets' certificate, must have: Contender::encrypted). The
// scenario waits for its ensemble to recover before the next trial.
//
// report_and_check() prints one parseable line per (scenario, config, client, T):
//   RELIABILITY suite=netfaults scenario=<s> config=<c> client=mutex|exec session_ms=<T> ...
// and one test failure per pair that went wrong, saying what and when, with the evidence.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "client_config.h"
#include "contenders.h"
#include "zklock/session.h"

namespace zklock::testing::netfaults {

// One holder and the waiter queued behind it.
struct CutPairPlan {
  ClientConfig config = ClientConfig::kPlain;
  ContenderKind kind = ContenderKind::kLibraryHolder;  // a holder or a leader (contenders.h)
  std::chrono::milliseconds session{0};
  const NetNamespace* holder_ns = nullptr;
  ClientTarget holder;
  const NetNamespace* waiter_ns = nullptr;
  ClientTarget waiter;
  Session* monitor = nullptr;  // sees this pair's queue (no chroot); nullptr: the context's
};

// Moments of one trial the scenario recorded while it was cut (CLOCK_MONOTONIC ns), by name, e.g.
// "new_leader": reported as <name>_after_cut_ms_median on the RELIABILITY lines.
using TrialMarks = std::vector<std::pair<std::string, std::int64_t>>;

struct CutActions {
  std::function<void()> cut;
  std::function<void()> heal;
  // Optional: called about every 100 ms from the cut until the trial settled, to record marks.
  std::function<void(TrialMarks&)> watch;
};

struct CutPairResult {
  int trial = 0;
  ClientConfig config = ClientConfig::kPlain;
  ContenderKind kind = ContenderKind::kLibraryHolder;
  std::chrono::milliseconds session{0};
  std::string error;        // the trial could not run as designed
  std::string unencrypted;  // the contenders asked to speak TLS that did not say they did
  std::int64_t cut_ns = 0;
  PairOutcome outcome;
  TrialMarks marks;
  std::string evidence;
};

// Where a trial runs: the scenario's name (for ids and lines), a session that watches the
// queues (it must see every lock path, chroots included), and the directory of logs.
struct CutContext {
  std::string scenario;  // "follower-cut", "leader-isolation"...
  Session& monitor;
  std::string dir;
  std::chrono::milliseconds settle_timeout{60'000};  // from the cut until every pair is done
};

// Runs one trial (see the file comment). A pair that could not be set up (a holder that never
// acquired, a waiter that never queued) is returned with `error` set, and the cut is not made.
std::vector<CutPairResult> run_cut_trial(const CutContext& context,
                                         const std::vector<CutPairPlan>& plans, int trial,
                                         unsigned seed, const CutActions& actions);

// The RELIABILITY lines and the failures (ADD_FAILURE), `where` naming the holder's side in
// failure messages ("the holder on the cut-off follower").
void report_and_check(const std::string& scenario, const std::vector<CutPairResult>& results,
                      const std::string& where);

// Creates kChroot through `monitor` (a session without a chroot) unless it exists.
void ensure_chroot(Session& monitor);

}  // namespace zklock::testing::netfaults
