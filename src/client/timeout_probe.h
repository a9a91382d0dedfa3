// Asking the ensemble what session timeout it grants (internal): a short-lived session of its own,
// requesting a small timeout, closed at once. The server clamps every requested timeout to
// [minSessionTimeout, maxSessionTimeout], and minSessionTimeout is 2 x tickTime unless an
// administrator changed it: so a granted timeout bounds the ensemble's tickTime, which the Lost
// rule's lag needs (session/tick_bound.h) and no client can read otherwise.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "client/log_router.h"

namespace zklock::detail {

/// Opens a session on `addresses` ("address:port,...", numeric) asking for `requested`, and closes
/// it as soon as it is connected. Returns: the timeout the server granted; nullopt if no server
/// connected it within `wait` or `stop()` turned true (polled every 50 ms). Blocks the caller.
/// `tls_settings`: over TLS, as the session it probes for (client/tls.h); then a connect or
/// handshake that has lasted 1 s is cut, so that the C client tries the next server, and
/// `on_cut` (if set) is called for each (the handshake failure the C client logs is ours).
std::optional<std::chrono::milliseconds> granted_session_timeout(
    const std::string& addresses, std::chrono::milliseconds requested,
    std::chrono::milliseconds wait, const std::function<bool()>& stop, CLogCallback log,
    const std::optional<std::string>& tls_settings = std::nullopt,
    const std::function<void()>& on_cut = {});

}  // namespace zklock::detail
