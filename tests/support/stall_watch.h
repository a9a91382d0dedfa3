// tests/support/stall_watch.h: tells a test whether the machine stopped running it for a while.
//
// On a virtual machine the host may not run the guest for seconds (steal), and a kernel stall can
// stop every process at once; the servers, the clients and the test all freeze, and whatever was
// timed across the stall - a blip's outage, a deadline - is longer than the test made it. A trial
// across such a stall did not test what it was meant to: it is not applicable (tests/netfaults'
// blips, issue 21), never a failure of the library. The watch is one thread that sleeps 10 ms at a
// time and records every wake-up more than 100 ms late; any process-wide stall shows there.
#pragma once

#include <cstdint>

namespace zklock::testing {

/// The longest stall seen overlapping [from_ns, to_ns] (CLOCK_MONOTONIC nanoseconds), 0 when
/// none. The first call starts the watch (it runs until the process exits), so call it once early
/// (`start_stall_watch()`): a stall before the first call is not seen.
std::int64_t longest_stall_ns(std::int64_t from_ns, std::int64_t to_ns);

/// Starts the watch if it is not running yet.
void start_stall_watch();

/// CLOCK_MONOTONIC now, in nanoseconds: the clock of the watch, and of the fault logs
/// (faults::monotonic_ns).
std::int64_t monotonic_clock_ns();

}  // namespace zklock::testing
