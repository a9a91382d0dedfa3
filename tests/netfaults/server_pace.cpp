// tests/netfaults/server_pace.cpp
#include "server_pace.h"

#include <algorithm>
#include <chrono>

#include "support/stall_watch.h"

namespace zklock::testing::netfaults {

ServerPace::ServerPace(Session& monitor) : thread_([this, &monitor] { run(monitor); }) {}

ServerPace::~ServerPace() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  thread_.join();
}

void ServerPace::run(Session& monitor) {
  while (true) {
    const std::int64_t sent = monotonic_clock_ns();
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      in_flight_since_ns_ = sent;
    }
    try {
      (void)monitor.children("/");
    } catch (const std::exception&) {
      // Counted as a read that took until now: the servers did not serve this client either.
    }
    const std::int64_t answered = monotonic_clock_ns();
    {
      std::lock_guard lock(mutex_);
      reads_.emplace_back(sent, answered);
      in_flight_since_ns_ = 0;
      if (stopping_) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the pace of the reads
  }
}

std::int64_t ServerPace::longest_ns(std::int64_t from_ns, std::int64_t to_ns) const {
  std::lock_guard lock(mutex_);
  std::int64_t longest = 0;
  for (const auto& [sent, answered] : reads_) {
    if (sent >= from_ns && sent <= to_ns)
      longest = std::max(longest, std::min(answered, to_ns) - sent);
  }
  if (in_flight_since_ns_ != 0 && in_flight_since_ns_ <= to_ns) {
    longest = std::max(longest, to_ns - std::max(in_flight_since_ns_, from_ns));
  }
  return longest;
}

}  // namespace zklock::testing::netfaults
