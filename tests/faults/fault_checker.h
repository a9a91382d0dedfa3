// tests/faults/fault_checker.h: reads the logs of a fault-injection run (fault_logs.h) and finds
// every violation of the lock's guarantees.
//
// A hold is one acquisition (holder, token). Its end, as far as acting on the resource goes, is the
// first of: released (or gave up), told Lost (the on_state_change callback ran), killed, or the
// start of a "losing" freeze - a freeze during which, or after which but before the holder noticed,
// someone else acquired the lock (a frozen process cannot be told anything; fencing covers it).
//
// Rules (the rule names appear in violations):
//   token-order            accepted writes are in non-decreasing token order (store order)
//   two-holders            a hold began before an earlier hold had ended in the sense above
//                          (in particular: before the earlier holder was told it lost)
//   token-not-increasing   a later acquisition got a token that is not larger
//   paused-write-accepted  a write of a holder paused past its expiry, decided after it resumed,
//                          was accepted (every such write must be rejected)
//   never-learned-lost     a holder paused past its expiry resumed and never learned it had lost
//   write-after-end        an accepted write was attempted after its hold had ended (released,
//                          told Lost, killed): e.g. a holder that ignores Lost
//   refused-while-holding  a write decided while its hold was valid was rejected: the store had
//                          seen a newer token, so someone else held the lock meanwhile, or the
//                          holder wrote with a stale token
//   stale-write-after-takeover  an accepted write was decided after a holder with a newer token
//                          had acquired
//   late-write-accepted    a deliberate late write (the test asked the holder to write with its
//                          old token after losing) was accepted
//   hold-never-ended       a hold has no end in the log (not released, not lost, not killed)
//   held-after-lost        a hold reported Held or Suspended after it had been reported Lost
//   unlogged-write         the store saw a write its holder never logged (log inconsistency)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fault_logs.h"
#include "fenced_store.h"

namespace zklock::testing::faults {

struct Violation {
  std::string rule;
  std::string detail;
};

struct CheckReport {
  std::vector<Violation> violations;
  // The trial did not test what it meant to (Trial::finish: the machine stalled so long that no
  // holder could run to be told before the server expired it); its figures are left out.
  bool not_applicable = false;
  std::size_t holds = 0;
  std::size_t holds_released = 0;
  std::size_t holds_lost = 0;  // ended by being told Lost
  std::size_t holds_killed = 0;
  std::size_t holds_paused_out = 0;  // cut short by a losing freeze
  std::size_t accepted = 0;
  std::size_t rejected = 0;
  std::size_t late_writes = 0;
  std::size_t writes_after_resume = 0;  // writes of paused-out holds decided after the thaw
  std::size_t unmatched_attempts = 0;   // attempts the store never saw (writer killed/stopped)
  // For each hold ended by Lost and followed by another hold: next acquisition - told Lost.
  std::vector<std::int64_t> told_lead_ns;
  // For each kill of a holder that held the lock: next acquisition - kill.
  std::vector<std::int64_t> takeover_after_kill_ns;

  bool has(const std::string& rule) const;
  // Counts and every violation, one per line.
  std::string describe() const;
  // Adds another run's figures and violations (several trials of one scenario).
  void merge(const CheckReport& other);
};

CheckReport check_run(const std::vector<StoreRecord>& store, const std::vector<HolderLog>& holders,
                      const std::vector<FaultRecord>& faults);

// Median and minimum/maximum of a list of nanosecond figures, as milliseconds ("-" when empty).
std::string ms_median(std::vector<std::int64_t> ns);
std::string ms_min(const std::vector<std::int64_t>& ns);
std::string ms_max(const std::vector<std::int64_t>& ns);

// The parseable figure line for docs/reliability.md:
// "RELIABILITY suite=faults scenario=<s> trials=<n> faults=<f> holds=.. accepted=.. rejected=..
//  violations=.. takeover_ms_median=.. takeover_ms_worst=.. told_lead_ms_median=..
//  told_lead_ms_worst=.. <extra>"
std::string reliability_line(const std::string& scenario, int trials, std::size_t faults,
                             const CheckReport& report, const std::string& extra = {});

}  // namespace zklock::testing::faults
