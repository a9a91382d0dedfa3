#include "lock_state_watch.h"

#include <algorithm>
#include <chrono>

#include "duration.h"

namespace zklock::cli {

LockState LockStateWatch::check() {
  const LockState now = mutex_.state();
  if (now == last_) return now;
  if (now == LockState::kSuspended) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        session_.lost_deadline() - std::chrono::steady_clock::now());
    console_.note("connection to ZooKeeper suspended: the lock on " + mutex_.path() +
                  " may be lost (declared lost in " +
                  format_duration(std::max(left, std::chrono::milliseconds(0))) +
                  " unless the session answers)");
  } else if (now == LockState::kHeld && last_ == LockState::kSuspended) {
    console_.note("connection to ZooKeeper back: still holding " + mutex_.path());
  }
  last_ = now;
  return now;
}

int LockStateWatch::poll_timeout_ms() const {
  if (last_ == LockState::kLost || last_ == LockState::kNotHeld) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(session_.lost_deadline() -
                                                                 std::chrono::steady_clock::now());
  // +1 ms: wake just after the deadline, when state() already says Lost. The floor keeps a
  // deadline that is already past from turning the loop into a busy spin.
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left.count() + 1, 5, 60'000));
}

}  // namespace zklock::cli
