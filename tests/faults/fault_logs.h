// tests/faults/fault_logs.h: the logs of a fault-injection run, as the checker (fault_checker.h)
// and the scenarios read them.
//
// All timed on CLOCK_MONOTONIC (one clock for all processes on the machine):
//  * the fenced store's records (fenced_store.h): every write, accepted or rejected, in the order
//    the store decided them;
//  * one log per holder process (fault_holder.cpp; format below);
//  * the faults the test injected (FaultLog): the checker needs "freeze"/"thaw"/"kill" of a holder,
//    the rest is counted and shown.
//
// Holder log: one line per event, "<ns> <kind> key=value ...", values without spaces. Kinds:
//   start id= pid= mode=            session state= prev= gen= sid=
//   acquired token= seq= gen= sid=   lock_state state=Held|Suspended|Lost token=
//   write_attempt n= token= late=0|1 (timestamp taken BEFORE the holder looked at the lock state)
//   write_result n= token= result=accepted|rejected newest=     write_error n= what=
//   self_stop n=  (the holder stops itself with SIGSTOP between its state check and write n)
//   released token= state=   gave_up token= reason=lost|fenced|... state=   lock_error what=
//   exit code=
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fenced_store.h"

namespace zklock::testing::faults {

struct LogEvent {
  std::int64_t at_ns = 0;
  std::string kind;
  std::map<std::string, std::string> fields;

  std::string get(const std::string& key) const;
  std::int64_t num(const std::string& key, std::int64_t fallback = 0) const;
};

struct HolderLog {
  std::string id;  // from the "start" line (else the file name)
  std::string path;
  std::vector<LogEvent> events;

  // Events of `kind` (all of them, in order).
  std::vector<LogEvent> of(const std::string& kind) const;
  // Number of "acquired" events.
  std::size_t acquisitions() const;

  // When the first event of `kind` at or after `after` whose fields include `match` happened.
  std::optional<std::int64_t> first_at(const std::string& kind,
                                       const std::map<std::string, std::string>& match = {},
                                       std::int64_t after = INT64_MIN) const;
  // When the holder learned that its hold was lost (at or after `after`): the
  // on_state_change(Lost) callback, or its own state() check saying Lost (it then gives up, and
  // releases before the callback could come: a released lock reports nothing more), whichever
  // came first.
  std::optional<std::int64_t> learned_lost(std::int64_t after = INT64_MIN) const;
  // The result line of the first late write: nullopt until it is there.
  std::optional<LogEvent> late_write_result() const;
};

// Parses lines "<ns> <kind> k=v ..."; malformed lines (e.g. the half line of a process killed
// while writing) are skipped.
std::vector<LogEvent> parse_log(const std::string& text);
HolderLog read_holder_log(const std::string& path);

// Store records from a store log file (format_record lines).
std::vector<StoreRecord> read_store_log(const std::string& path);

// A fault the test injected. `target` is a holder id for freeze/thaw/kill/blackhole/heal...
struct FaultRecord {
  std::int64_t at_ns = 0;
  std::string kind;
  std::string target;
  std::string detail;
};

// Thread-safe list of injected faults; optionally mirrored to a file (one line each).
class FaultLog {
 public:
  explicit FaultLog(std::string path = {});
  // Records `kind` now (CLOCK_MONOTONIC).
  void record(const std::string& kind, const std::string& target = {},
              const std::string& detail = {});
  std::vector<FaultRecord> records() const;
  // Faults injected: records that start a fault (not "thaw", "heal", "end-...", "restart...").
  std::size_t injected() const;

 private:
  std::string path_;
  mutable std::mutex mutex_;
  std::vector<FaultRecord> records_;
};

}  // namespace zklock::testing::faults
