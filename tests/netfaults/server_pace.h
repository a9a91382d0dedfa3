// tests/netfaults/server_pace.h: ServerPace, how quickly the servers answer a healthy client
// while a trial runs - the measure a blip trial needs when its holder, healed, could not get an
// answer in time: were the servers (and the machine) serving anybody at that pace?
//
// What it guarantees: from construction to destruction, one thread reads the children of "/"
// through `monitor` (a session on a link that is never cut), one read at a time with a 50 ms
// pause between reads, and keeps each read's send and answer times (CLOCK_MONOTONIC ns, the
// clock of the fault logs). longest_ns(from, to) is the longest any read sent in [from, to] took
// - a read still unanswered at `to` counts as taking to - sent. A read that failed (the monitor's
// own session in trouble) counts likewise, up to when it failed.
#pragma once

#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "zklock/session.h"

namespace zklock::testing::netfaults {

class ServerPace {
 public:
  explicit ServerPace(Session& monitor);
  ~ServerPace();  // joins the thread once its read in flight has returned
  ServerPace(const ServerPace&) = delete;
  ServerPace& operator=(const ServerPace&) = delete;

  std::int64_t longest_ns(std::int64_t from_ns, std::int64_t to_ns) const;

 private:
  void run(Session& monitor);

  mutable std::mutex mutex_;
  bool stopping_ = false;
  std::int64_t in_flight_since_ns_ = 0;                       // 0: no read in flight
  std::vector<std::pair<std::int64_t, std::int64_t>> reads_;  // (sent, answered)
  std::thread thread_;
};

}  // namespace zklock::testing::netfaults
