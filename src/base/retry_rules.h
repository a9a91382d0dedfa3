// What a failed request's code means for the recipes that send it again (lock, semaphore, set),
// and how long they pause between tries. One rule for every recipe, so that a code added to one
// class is added for all.
#pragma once

#include <algorithm>
#include <chrono>

#include "zklock/errors.h"

namespace zklock::detail {

// The session that sent it is gone (expired, judged lost, closing): nothing it owned survives;
// the next generation starts over.
inline bool is_session_gone(Errc rc) {
  return rc == Errc::session_lost || rc == Errc::session_expired || rc == Errc::invalid_state ||
         rc == Errc::closing;
}

// "This connection is stale": the request may or may not have taken effect, and the next
// connection of the same session cures it (look again, then act).
inline bool cured_by_reconnecting(Errc rc) {
  return rc == Errc::connection_loss || rc == Errc::operation_timeout || rc == Errc::session_moved;
}

// The server refused for now (too many requests): the same request may succeed after a pause.
inline bool worth_retrying_later(Errc rc) { return rc == Errc::throttled; }

// The pause before try number `attempt` (0, 1, ...) of a step the server refused for now:
// 50 ms, doubling, at most 2 s.
inline std::chrono::milliseconds retry_backoff(int attempt) {
  constexpr std::chrono::milliseconds kFirst{50};
  constexpr std::chrono::milliseconds kMax{2000};
  return std::min(kFirst * (1 << std::clamp(attempt, 0, 6)), kMax);
}

}  // namespace zklock::detail
