// What a session can know of its ensemble's tickTime, which the Lost rule's lag is made of
// (internal; pure).
//
// The server grants no session timeout below minSessionTimeout, which is 2 x tickTime unless an
// administrator changed it. So every timeout granted to any session is an upper bound of
// 2 x tickTime - and an upper bound is what the lag needs (too long a lag costs blip budget, too
// short one safety). If an administrator lowered minSessionTimeout below 2 x tickTime the bound
// fails: then SessionOptions::server_tick_time must say the real value (docs/sessions.md).
#pragma once

#include <chrono>
#include <optional>

namespace zklock::detail {

/// The timeout the probe session asks for (client/timeout_probe.h): small, so that the server's
/// clamp shows its minSessionTimeout; not so small that the C client's own connect timeout (2/3 of
/// it) gives up on an ordinary network.
inline constexpr std::chrono::milliseconds kProbeTimeout{1000};

/// Returns: the tickTime to use - `configured` (SessionOptions::server_tick_time) if set, else
/// half the smallest timeout the ensemble is known to have granted: `negotiated` (this session's)
/// and `probe_granted` (the probe's, if it ran).
std::chrono::milliseconds tick_bound(std::chrono::milliseconds configured,
                                     std::chrono::milliseconds negotiated,
                                     std::optional<std::chrono::milliseconds> probe_granted);

}  // namespace zklock::detail
