// tests/netfaults/blip_trial.h: one physical blip trial - a holder's own link silenced for d, then
// healed - judged by what was measured, not by what was asked (issue 21); shared by
// physical_blip_test and production_blip_test.
//
// A trial: the holder (in its own namespace, behind its own veth link) acquires; a waiter queues
// behind it; at a random point of the heartbeat cycle the link is blackholed on both ends for d
// and healed; the holder is then either told Lost or Held again (the session answered after the
// blip). Kept: asked to finish, it releases and the waiter takes over. Lost: the waiter acquires.
// Then the pair is judged (judge_pair, fault_checker).
//
// Measured, not asked: the outage is measured from just before the cut to just after the heal (both
// `tc` commands of each included), a watch thread sees whether the whole machine stalled (every
// process frozen, support/stall_watch.h), and the waiter - on a link never cut - shows whether the
// servers served their clients (its session never Suspended nor Lost), as does the holder before
// the cut (its session never Suspended while its link was whole), and a healthy client's reads from
// the heal on whether they served them in time (pace.h: one read took half of what the holder had
// from the heal to its Lost, less the lag, or more - a quarter over TLS, whose handshake adds two
// answers to wait for), and address lookups like the ones the holder's reconnects make whether the
// kernel let them through in time (the same measure); when they did not, the holder's silence was
// longer than the blip too. When the silence the holder saw was longer than d by more than the
// session's lost margin (max(T/20, 50 ms), the library's default), an outcome that a longer silence
// cannot have caused still stands: a kept lock kept a longer blip than asked (the budget only
// shrinks as the silence grows), a lock lost and told before the takeover is what a blip past the
// budget must give, a kept lock that had to be lost is wrong at any length. Any other outcome (lost
// where it should have been kept, an error such as a waiter whose own session a stall cost) may be
// the overshoot's doing: the trial is NOT APPLICABLE - never a pass, never a failure of the library
// - and is run again, at most kMaxReruns times. One that is never applicable is reported (NOT
// APPLICABLE, and its line's not_applicable=) and not judged. The rules that hold whatever the
// length - never two holders, no fault_checker violation, exit 76 for a lost `zklock exec` - are
// checked on every attempt, the not-applicable ones included; so is, for a pair that was to speak
// TLS (its targets' certificate), that both contenders did (Contender::encrypted).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "client_config.h"
#include "contenders.h"
#include "linked_netns.h"
#include "zklock/session.h"

namespace zklock::testing::netfaults {

// What a blip of this length must do to the lock.
enum class BlipExpect {
  kKept,  // held through: same acquisition, released normally when asked (exec: exit 0)
  kLost,  // lost (the server expired the session, or may have): told before the takeover
  kAny,   // at the edge of the budget: either, safely
};

inline constexpr int kMaxReruns = 3;

struct BlipPlan {
  std::string name;  // unique in the run (names files and lock paths)
  ClientConfig config = ClientConfig::kPlain;
  std::string server;  // "standalone" or "ensemble", for the lines
  ContenderKind kind = ContenderKind::kLibraryHolder;
  std::chrono::milliseconds session{0};
  double x = 0;  // d = x T
  BlipExpect expect = BlipExpect::kAny;
  LinkedNamespace* holder_ns = nullptr;  // its link is the one cut
  ClientTarget holder;
  const NetNamespace* waiter_ns = nullptr;  // nullptr: the host
  ClientTarget waiter;
  Session* monitor = nullptr;  // sees the lock path (no chroot)
  // The confirmation lag the holder's session applies (server_topology.h): 0 on a standalone
  // server, a whole tickTime through an ensemble - time after the heal that no answer can save.
  std::chrono::milliseconds lag{0};
  std::string dir;
};

struct BlipResult {
  BlipPlan plan;
  std::string error;                    // the trial could not run as designed
  std::int64_t cut_ns = 0;              // just before the first `tc` of the cut
  std::int64_t heal_ns = 0;             // just after the last `tc` of the heal
  std::int64_t cut_done_ns = 0;         // just after the last `tc` of the cut
  bool cut_late = false;                // the cut took more than the margin to apply: the
                                        // silence may have been shorter than d
  bool applicable = true;               // the measured outage overshot d by at most the margin,
                                        // and the machine never stalled longer than that
  std::int64_t stall_ns = 0;            // longest stall of the machine (support/stall_watch.h)
  bool servers_failed = false;          // the waiter's own session (never cut) went Suspended or
                                        // Lost before the outcome
  bool troubled_before_cut = false;     // the holder's session was Suspended before the cut
  std::int64_t slowest_read_ns = 0;     // a healthy client's slowest read from the heal to Lost
  bool servers_slow = false;            // told Lost, and that read took half the time the
                                        // holder had from the heal to Lost (less the lag), or
                                        // more (a quarter over TLS: twice the answers to wait for)
  std::int64_t slowest_lookup_ns = 0;   // the slowest address lookup from the heal to Lost
  bool network_slow = false;            // told Lost, and that lookup took half that time or more
  bool never_applicable = false;        // not applicable in every attempt: not judged but for
                                        // what holds whatever the length
  int not_applicable = 0;               // attempts before this one that were not applicable
  std::int64_t worst_overshoot_ns = 0;  // over every attempt
  std::string rerun_problems;  // length-independent failures of the not-applicable attempts
  std::string unencrypted;     // the contenders asked to speak TLS that did not say they did
  bool kept = false;           // held through: same acquisition, released normally when asked
  bool saw_suspended = false;
  // The session answered again after the heal: the library holder's Suspended -> Connected
  // (its own log), or when the test saw zklock exec report the lock Held again (10 ms polls).
  std::int64_t answered_ns = 0;
  PairOutcome outcome;
  std::string evidence;

  std::int64_t outage_ns() const { return heal_ns - cut_ns; }
};

// The lost margin the outage may overshoot by: max(T/20, 50 ms).
std::chrono::milliseconds overshoot_margin(std::chrono::milliseconds session);

// One trial, rerun while not applicable (at most kMaxReruns times; see the file comment).
BlipResult run_blip(const BlipPlan& plan, unsigned seed);

// "kept", "told Lost 5103.2 ms after the cut", ... for failure messages.
std::string describe(const BlipResult& r);
// The failures of one trial, one line each ("" when none).
std::string problems_of(const BlipResult& r);

// One RELIABILITY line per (config, client) among `results` (of one T and d), then one
// ADD_FAILURE per trial with problems.
void report_blips(const std::vector<BlipResult>& results);

// "0.75" for 0.75.
std::string label(double x);

}  // namespace zklock::testing::netfaults
