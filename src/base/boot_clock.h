// BootClock: a monotonic clock that keeps counting while the machine is suspended (internal).
//
// std::chrono::steady_clock is CLOCK_MONOTONIC, which stands still while a laptop sleeps or a VM is
// suspended by its guest. A ZooKeeper server's clock does not: a session whose client slept through
// its timeout has expired. The Lost rule therefore measures on CLOCK_BOOTTIME, so that a process
// resumed after a suspend sees Lost at once. What no client clock can see: a VM frozen by its
// hypervisor without the guest knowing (its clocks may jump or not, depending on the platform).
#pragma once

#include <chrono>
#include <ctime>

namespace zklock::detail {

// The member names are the ones the standard's Clock requirements prescribe.
// NOLINTBEGIN(readability-identifier-naming)
struct BootClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<BootClock>;
  static constexpr bool is_steady = true;

  static time_point now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
  }
};
// NOLINTEND(readability-identifier-naming)

/// The steady_clock time point that corresponds to `t` (for waits and for the public API).
inline std::chrono::steady_clock::time_point to_steady(BootClock::time_point t) noexcept {
  if (t == BootClock::time_point::max()) return std::chrono::steady_clock::time_point::max();
  if (t == BootClock::time_point::min()) return std::chrono::steady_clock::time_point::min();
  const auto steady_now = std::chrono::steady_clock::now();
  const auto boot_now = BootClock::now();
  return steady_now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(t - boot_now);
}

}  // namespace zklock::detail
