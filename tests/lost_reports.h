// tests/lost_reports.h: what a lock's on_state_change said of Lost - how often, and when first -
// for the tests that check that a holder is told.
//
// What it guarantees: options() returns MutexOptions whose on_state_change records every kLost
// report (with `shared_holds_only`, those of shared holds only); count() is how many came, told()
// whether one did, told_at() the steady-clock time at which the first one's callback ran. The
// LostReports must outlive the locks made with its options.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "zklock/mutex.h"

namespace zklock::testing {

class LostReports {
 public:
  using Clock = std::chrono::steady_clock;

  MutexOptions options(bool shared_holds_only = false) {
    MutexOptions o;
    o.on_state_change = [this, shared_holds_only](LockState state, const Acquisition& acquisition) {
      if (state != LockState::kLost || (shared_holds_only && !acquisition.shared)) return;
      std::int64_t none = 0;
      first_ns_.compare_exchange_strong(none, Clock::now().time_since_epoch().count());
      ++count_;
    };
    return o;
  }
  int count() const { return count_; }
  bool told() const { return first_ns_ != 0; }
  Clock::time_point told_at() const { return Clock::time_point(Clock::duration(first_ns_)); }

 private:
  std::atomic<std::int64_t> first_ns_{0};
  std::atomic<int> count_{0};
};

}  // namespace zklock::testing
