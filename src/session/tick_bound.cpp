#include "session/tick_bound.h"

#include <algorithm>

namespace zklock::detail {

std::chrono::milliseconds tick_bound(std::chrono::milliseconds configured,
                                     std::chrono::milliseconds negotiated,
                                     std::optional<std::chrono::milliseconds> probe_granted) {
  if (configured.count() > 0) return configured;
  std::chrono::milliseconds smallest = negotiated;
  if (probe_granted && probe_granted->count() > 0) smallest = std::min(smallest, *probe_granted);
  return smallest / 2;
}

}  // namespace zklock::detail
