// tests/netfaults/pace.cpp
#include "pace.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "support/stall_watch.h"

namespace zklock::testing::netfaults {

Pace::Pace(std::function<void()> probe)
    : thread_([this, probe = std::move(probe)] { run(probe); }) {}

Pace::~Pace() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  thread_.join();
}

void Pace::run(const std::function<void()>& probe) {
  while (true) {
    const std::int64_t started = monotonic_clock_ns();
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      in_flight_since_ns_ = started;
    }
    try {
      probe();
    } catch (const std::exception&) {
      // Counted as a run that took until now: nobody got the service either.
    }
    const std::int64_t ended = monotonic_clock_ns();
    {
      std::lock_guard lock(mutex_);
      runs_.emplace_back(started, ended);
      in_flight_since_ns_ = 0;
      if (stopping_) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the pace of the probes
  }
}

std::int64_t Pace::longest_ns(std::int64_t from_ns, std::int64_t to_ns) const {
  std::lock_guard lock(mutex_);
  std::int64_t longest = 0;
  for (const auto& [started, ended] : runs_) {
    if (ended >= from_ns && started <= to_ns) {
      longest = std::max(longest, std::min(ended, to_ns) - std::max(started, from_ns));
    }
  }
  if (in_flight_since_ns_ != 0 && in_flight_since_ns_ <= to_ns) {
    longest = std::max(longest, to_ns - std::max(in_flight_since_ns_, from_ns));
  }
  return longest;
}

std::function<void()> server_read(Session& monitor) {
  return [&monitor] { (void)monitor.children("/"); };
}

std::function<void()> address_lookup() {
  return [] {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;  // as the C client (zookeeper.c, resolve_hosts)
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo("127.0.0.1", "2181", &hints, &found);
    if (found != nullptr) ::freeaddrinfo(found);
    if (rc != 0) throw std::runtime_error(::gai_strerror(rc));
  };
}

}  // namespace zklock::testing::netfaults
