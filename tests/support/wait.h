// tests/support/wait.h: polling with a deadline, the only way tests wait for something to happen,
// and the arithmetic of deadlines for the calls (poll(2)) that take a timeout.
//
// Tests must never sleep "long enough" and hope: they poll a condition until it holds or a
// deadline passes, so they are as fast as the system allows and fail with a clear timeout when
// the awaited event never comes.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

namespace zklock::testing {

// Milliseconds from now until `deadline`, rounded up (a wait never ends before the deadline),
// as poll(2) takes them; 0 once the deadline has passed.
inline int ms_until(std::chrono::steady_clock::time_point deadline) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left.count(), 0, 1 << 30));
}

// Evaluates `cond` until it returns true or `timeout` has elapsed, sleeping `poll` between
// evaluations. `cond` is always evaluated at least once, and the last sleep ends at the deadline
// so the final evaluation happens at (or just after) it: a condition that becomes true during the
// last poll interval is still seen.
// Returns true as soon as `cond` returns true; false if it never did before the deadline.
// Exceptions thrown by `cond` propagate.
inline bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds poll = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (cond()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(poll, deadline - now));
  }
}

}  // namespace zklock::testing
