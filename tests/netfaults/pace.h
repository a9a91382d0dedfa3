// tests/netfaults/pace.h: Pace, how quickly the machine serves a healthy client while a trial
// runs - the measure a blip trial needs when its holder, healed, could not get an answer in time:
// did anybody get that service at that pace?
//
// Two probes:
//  * server_read(monitor): reads the children of "/" through `monitor` (a session on a link that
//    is never cut) - did the servers answer a healthy client?
//  * address_lookup(): getaddrinfo("127.0.0.1", AI_ADDRCONFIG), the call the C client makes before
//    each connection attempt (the healed holder's reconnect among them). AI_ADDRCONFIG asks the
//    kernel for the machine's addresses over netlink, which waits for the kernel's network
//    configuration lock (rtnl) - held, under load, for seconds by other trials' `tc` and by
//    namespaces being torn down. The lock is the whole kernel's: a lookup here waits as the
//    holder's does in its namespace.
//
// What it guarantees: from construction to destruction, one thread runs the probe, one at a time
// with a 50 ms pause between runs, and keeps each run's start and end times (CLOCK_MONOTONIC ns,
// the clock of the fault logs). longest_ns(from, to) is the longest any run started in [from, to]
// took - a run still going at `to` counts as taking to - start, one in flight at `from` as from
// `from`. A probe that throws counts likewise, up to when it threw.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "zklock/session.h"

namespace zklock::testing::netfaults {

class Pace {
 public:
  explicit Pace(std::function<void()> probe);
  ~Pace();  // joins the thread once its probe in flight has returned
  Pace(const Pace&) = delete;
  Pace& operator=(const Pace&) = delete;

  std::int64_t longest_ns(std::int64_t from_ns, std::int64_t to_ns) const;

 private:
  void run(const std::function<void()>& probe);

  mutable std::mutex mutex_;
  bool stopping_ = false;
  std::int64_t in_flight_since_ns_ = 0;                      // 0: no probe in flight
  std::vector<std::pair<std::int64_t, std::int64_t>> runs_;  // (started, ended)
  std::thread thread_;
};

// The probes (see the file comment). `monitor` must outlive the Pace.
std::function<void()> server_read(Session& monitor);
std::function<void()> address_lookup();

}  // namespace zklock::testing::netfaults
